import AsyncHTTPClient
import ChorusProviders
import Foundation
import NIOCore
import NIOFoundationCompat
import Testing

@testable import ChorusSandbox

/// The image emulator's pictures: real PNGs at the answered size whose content follows the prompt, decoded here by an
/// independent reader (zlib stored and fixed-Huffman blocks, all five PNG filters).
@Suite("Sandbox OpenAI: pictures follow the prompt")
struct SandboxPictureTests {
    @Test("pictures come at the requested size (auto: 1024×1024) as valid PNGs of a sane size")
    func sizes() async throws {
        try await withOpenAI { harness in
            let images = OpenAIImageGenerator(connection: harness.connection())
            for (size, width, height) in [("1024x1024", 1_024, 1_024), ("1536x1024", 1_536, 1_024), ("1024x1536", 1_024, 1_536), ("512x512", 512, 512)] {
                let image = try await images.generate(
                    ImageGenerationRequest(model: "gpt-image-2", prompt: "A girl with red hair in a garden at night", size: size, quality: "low"))
                let decoded = try DecodedPNG(image.png)
                #expect(decoded.width == width && decoded.height == height, "\(size)")
                #expect(image.png.count < 400_000, "\(size): \(image.png.count) bytes")
            }
            let auto = try await harness.postImage(#"{"model":"gpt-image-1","prompt":"A red house by the sea"}"#)
            #expect(auto.status == 200)
            let data = try #require(auto.json["data"] as? [[String: Any]])
            let png = try #require(Data(base64Encoded: data.first?["b64_json"] as? String ?? ""))
            let decoded = try DecodedPNG(png)
            #expect(decoded.width == 1_024 && decoded.height == 1_024 && auto.json["size"] as? String == "1024x1024")
        }
    }

    @Test("the quality changes the detail, not the size: low is drawn in 4×4 blocks, medium in 2×2, high pixel by pixel")
    func qualityDetail() async throws {
        try await withOpenAI { harness in
            let images = OpenAIImageGenerator(connection: harness.connection())
            /// Whether every pixel repeats the top-left pixel of its `block`×`block` square.
            func blocky(_ picture: DecodedPNG, _ block: Int) -> Bool {
                (0..<picture.height).allSatisfy { y in
                    (0..<picture.width).allSatisfy { x in picture.pixel(x, y) == picture.pixel(x - x % block, y - y % block) }
                }
            }
            var drawn: [String: DecodedPNG] = [:]
            for quality in ["low", "medium", "high"] {
                let image = try await images.generate(
                    ImageGenerationRequest(model: "gpt-image-2", prompt: "A portrait of a girl with red hair, avatar", size: "1024x1024", quality: quality))
                let decoded = try DecodedPNG(image.png)
                #expect(decoded.width == 1_024 && decoded.height == 1_024, "\(quality)")
                drawn[quality] = decoded
            }
            let (low, medium, high) = (try #require(drawn["low"]), try #require(drawn["medium"]), try #require(drawn["high"]))
            #expect(blocky(low, 4) && blocky(medium, 2) && !blocky(medium, 4) && !blocky(high, 2))
        }
    }

    @Test("an invalid size is refused with OpenAI's error shape")
    func invalidSize() async throws {
        try await withOpenAI { harness in
            for body in [
                #"{"model":"gpt-image-1","prompt":"A fox","size":"512x512"}"#, #"{"model":"gpt-image-2","prompt":"A fox","size":"1000x1000"}"#,
                #"{"model":"gpt-image-2","prompt":"A fox","size":"99999999999999999999x16"}"#,
            ] {
                let answer = try await harness.postImage(body)
                let error = try #require(answer.json["error"] as? [String: Any])
                #expect(answer.status == 400)
                #expect(error["param"] as? String == "size" && error["code"] as? String == "invalid_value" && error["type"] as? String == "invalid_request_error")
                #expect((error["message"] as? String ?? "").contains("Supported values are"))
            }
        }
    }

    @Test("the picture follows the prompt: named colours, day or night, and the same prompt draws the same picture")
    func content() throws {
        func draw(_ prompt: String, variant: Int = 0) throws -> DecodedPNG {
            try DecodedPNG(SandboxPNG.picture(prompt: prompt, variant: variant, width: 512, height: 512))
        }
        let blue = try draw("A child in a blue raincoat in a sunny meadow")
        let green = try draw("A child in a green raincoat in a sunny meadow")
        let isBlue = { (p: DecodedPNG.Pixel) in Int(p.b) > Int(p.r) + 100 && Int(p.b) > Int(p.g) + 90 }
        let isGreen = { (p: DecodedPNG.Pixel) in p.r == 40 && p.g == 150 && p.b == 60 }
        #expect(blue.fraction(isBlue) > 0.02, "the raincoat is blue: \(blue.fraction(isBlue))")
        #expect(green.fraction(isBlue) < 0.001, "no blue raincoat: \(green.fraction(isBlue))")
        #expect(green.fraction(isGreen) > 0.02 && blue.fraction(isGreen) < 0.001)

        let night = try draw("Mia falls asleep under the moon and the stars")
        let day = try draw("Mia plays in the park on a sunny afternoon")
        let top = { (picture: DecodedPNG) in picture.mean(x: 0..<512, y: 0..<128) }
        #expect(top(night) < 80 && top(day) > 140, "night sky \(top(night)), day sky \(top(day))")
        #expect(night.fraction { $0.r > 235 && $0.g > 230 && $0.b > 180 && $0.b < 220 } > 0.002, "a pale moon and stars")

        let portrait = try draw("A friendly children's book character portrait of Leo, a boy with blonde hair. Plain light background")
        #expect(portrait.fraction { $0.r == 240 && $0.g == 205 && $0.b == 110 } > 0.005, "blonde hair")

        let fox = try draw("A fox in a garden")
        let bear = try draw("A bear on a boat")
        #expect(fox.pixels != bear.pixels)
        #expect(try draw("A fox in a garden").pixels == fox.pixels, "deterministic")
        #expect(try draw("A fox in a garden", variant: 1).pixels != fox.pixels, "n > 1 gives different pictures")
        #expect(fox.fraction { $0.r == 230 && $0.g == 110 && $0.b == 30 } > 0.005, "an orange fox")
    }

    @Test("prompts in the other story languages are understood")
    func otherLanguages() throws {
        let isRed = { (p: DecodedPNG.Pixel) in p.r == 215 && p.g == 38 && p.b == 45 }
        for prompt in [
            "Una niña con un abrigo rojo bajo las estrellas", "Une fille avec un manteau rouge sous les étoiles",
            "Ein Mädchen mit einem roten Mantel unter den Sternen", "Una bambina con un cappotto rosso sotto le stelle",
        ] {
            let picture = try DecodedPNG(SandboxPNG.picture(prompt: prompt, variant: 0, width: 256, height: 256))
            #expect(picture.fraction(isRed) > 0.01, "\(prompt)")
            #expect(picture.mean(x: 0..<256, y: 0..<64) < 80, "\(prompt): night")
        }
    }
}

extension OpenAIHarness {
    /// `POST /images/generations` with a raw JSON body: status and JSON object.
    func postImage(_ json: String) async throws -> (status: Int, json: [String: Any]) {
        var request = HTTPClientRequest(url: apiURL.absoluteString + "/images/generations")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(OpenAIHarness.apiKey)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 26)
        return (Int(response.status.code), try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:])
    }
}

/// An 8-bit RGB PNG decoded: IHDR, the IDAT stream inflated (stored and fixed-Huffman blocks), the scanlines unfiltered.
struct DecodedPNG {
    struct Pixel: Equatable {
        let r: UInt8
        let g: UInt8
        let b: UInt8
    }

    enum Failure: Error { case notPNG, unsupported(String), corrupt(String) }

    let width: Int
    let height: Int
    let pixels: [UInt8]

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { throw Failure.notPNG }
        var offset = 8
        var header: [UInt8] = []
        var stream: [UInt8] = []
        func be32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
        while offset + 8 <= bytes.count {
            let length = be32(offset)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            guard offset + 12 + length <= bytes.count else { throw Failure.corrupt("chunk \(type) runs past the end") }
            let body = Array(bytes[(offset + 8)..<(offset + 8 + length)])
            let crc = UInt32(be32(offset + 8 + length))
            guard SandboxPNG.crc32(Data(bytes[(offset + 4)..<(offset + 8 + length)])) == crc else { throw Failure.corrupt("CRC of \(type)") }
            if type == "IHDR" { header = body }
            if type == "IDAT" { stream += body }
            offset += 12 + length
            if type == "IEND" { break }
        }
        guard header.count == 13 else { throw Failure.corrupt("IHDR") }
        width = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        height = Int(header[4]) << 24 | Int(header[5]) << 16 | Int(header[6]) << 8 | Int(header[7])
        guard header[8] == 8, header[9] == 2, header[12] == 0 else { throw Failure.unsupported("not 8-bit RGB without interlace") }
        var inflater = Inflater(Array(stream.dropFirst(2)))
        let raw = try inflater.inflate()
        let stride = width * 3
        guard raw.count == height * (stride + 1) else { throw Failure.corrupt("\(raw.count) bytes of scanlines") }
        var out = [UInt8](repeating: 0, count: height * stride)
        for y in 0..<height {
            let filter = raw[y * (stride + 1)]
            for x in 0..<stride {
                let value = raw[y * (stride + 1) + 1 + x]
                let left = x >= 3 ? Int(out[y * stride + x - 3]) : 0
                let up = y > 0 ? Int(out[(y - 1) * stride + x]) : 0
                let upLeft = x >= 3 && y > 0 ? Int(out[(y - 1) * stride + x - 3]) : 0
                let predicted: Int
                switch filter {
                case 0: predicted = 0
                case 1: predicted = left
                case 2: predicted = up
                case 3: predicted = (left + up) / 2
                case 4:
                    let p = left + up - upLeft
                    let (pa, pb, pc) = (abs(p - left), abs(p - up), abs(p - upLeft))
                    predicted = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft
                default: throw Failure.corrupt("filter \(filter)")
                }
                out[y * stride + x] = value &+ UInt8(truncatingIfNeeded: predicted)
            }
        }
        pixels = out
    }

    func pixel(_ x: Int, _ y: Int) -> Pixel {
        let index = (y * width + x) * 3
        return Pixel(r: pixels[index], g: pixels[index + 1], b: pixels[index + 2])
    }

    /// The share of pixels for which `test` holds.
    func fraction(_ test: (Pixel) -> Bool) -> Double {
        var count = 0
        for y in 0..<height { for x in 0..<width where test(pixel(x, y)) { count += 1 } }
        return Double(count) / Double(width * height)
    }

    /// The mean brightness (0–255) of a region.
    func mean(x xs: Range<Int>, y ys: Range<Int>) -> Double {
        var total = 0
        for y in ys { for x in xs { let p = pixel(x, y); total += Int(p.r) + Int(p.g) + Int(p.b) } }
        return Double(total) / Double(3 * xs.count * ys.count)
    }

    /// A deflate reader for stored and fixed-Huffman blocks.
    struct Inflater {
        let input: [UInt8]
        var position = 0
        var bit = 0

        init(_ input: [UInt8]) { self.input = input }

        mutating func bits(_ count: Int) throws -> Int {
            var value = 0
            for index in 0..<count {
                guard position < input.count else { throw Failure.corrupt("deflate stream ends early") }
                value |= Int((input[position] >> UInt8(bit)) & 1) << index
                bit += 1
                if bit == 8 { bit = 0; position += 1 }
            }
            return value
        }

        /// A fixed-Huffman literal/length symbol: codes are read most significant bit first.
        mutating func symbol() throws -> Int {
            var code = 0
            for length in 1...9 {
                code = code << 1 | (try bits(1))
                switch length {
                case 7 where code <= 0b0010111: return code + 256
                case 8 where (0b0011_0000...0b1011_1111).contains(code): return code - 0b0011_0000
                case 8 where (0b1100_0000...0b1100_0111).contains(code): return code - 0b1100_0000 + 280
                case 9 where (0b1_1001_0000...0b1_1111_1111).contains(code): return code - 0b1_1001_0000 + 144
                default: continue
                }
            }
            throw Failure.corrupt("bad symbol")
        }

        mutating func inflate() throws -> [UInt8] {
            let lengthBases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
            let lengthExtras = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
            let distanceBases = [
                1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289,
                16385, 24577,
            ]
            var out: [UInt8] = []
            var final = 0
            repeat {
                final = try bits(1)
                switch try bits(2) {
                case 0:
                    if bit > 0 { bit = 0; position += 1 }
                    guard position + 4 <= input.count else { throw Failure.corrupt("stored header") }
                    let length = Int(input[position]) | Int(input[position + 1]) << 8
                    position += 4
                    guard position + length <= input.count else { throw Failure.corrupt("stored block") }
                    out += input[position..<(position + length)]
                    position += length
                case 1:
                    while true {
                        let symbol = try symbol()
                        if symbol < 256 { out.append(UInt8(symbol)); continue }
                        if symbol == 256 { break }
                        let code = symbol - 257
                        guard code < 29 else { throw Failure.corrupt("length code") }
                        let length = lengthBases[code] + (try bits(lengthExtras[code]))
                        var distanceCode = 0
                        for _ in 0..<5 { distanceCode = distanceCode << 1 | (try bits(1)) }
                        guard distanceCode < 30 else { throw Failure.corrupt("distance code") }
                        let distance = distanceBases[distanceCode] + (try bits(max(0, distanceCode / 2 - 1)))
                        guard distance <= out.count else { throw Failure.corrupt("distance too far") }
                        for _ in 0..<length { out.append(out[out.count - distance]) }
                    }
                default:
                    throw Failure.unsupported("dynamic Huffman blocks")
                }
            } while final == 0
            return out
        }
    }
}
