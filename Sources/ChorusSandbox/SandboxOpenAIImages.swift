import Crypto
import Foundation
import Vapor

/// `POST /images/generations` and `POST /moderations` of ``SandboxOpenAI``.
///
/// **Images** (`CreateImageRequest` for GPT image models): `model` and `prompt` required; `n` 1–10; `size`
/// `1024x1024`, `1536x1024`, `1024x1536`, `auto` (any `WxH` with both sides divisible by 16, up to 3840x2160, for
/// `gpt-image-2*`); `quality` low, medium, high, auto; `output_format` png (jpeg and webp are refused: the sandbox has
/// no encoder); `response_format` is refused as GPT image models refuse it. The answer is `{created, data:
/// [{b64_json}], output_format, size, quality, usage}` where each image is a PNG of the answered size (`auto`:
/// 1024×1024) painted from the prompt's words by ``SandboxPicture`` (sky, sun or moon and stars, a figure, a house,
/// trees, water, in the colours the prompt names), placed by a hash of the prompt (different prompts, different
/// pictures), with a `tEXt` chunk `prompt` holding the prompt.
/// A prompt containing `[sandbox:content_policy]` is refused with 400 `moderation_blocked`, like the real safety
/// system.
///
/// **Moderations**: `{input: string | string[], model?}` → `{id, model, results: [{flagged, categories,
/// category_scores}]}`; text with `[sandbox:flag]` or a violent word (kill, blood, weapon, gun) is flagged `violence`.
extension SandboxOpenAI {
    static let contentPolicyMarker = "[sandbox:content_policy]"
    static let imageModels = ["gpt-image-2", "gpt-image-2-2026-04-21", "gpt-image-1.5", "gpt-image-1-mini", "gpt-image-1"]

    func imageGeneration(_ request: Request) -> Response {
        guard let text = request.body.string, case .object(let body)? = RealtimeJSON.parse(text) else { return Self.unparsableJSON() }
        let allowed: Set<String> = [
            "model", "prompt", "n", "size", "quality", "output_format", "output_compression", "background", "moderation", "user",
            "response_format", "style", "stream", "partial_images",
        ]
        if let unknown = body.keys.first(where: { !allowed.contains($0) }) {
            return Self.invalid("Unknown parameter: '\(unknown)'.", param: unknown, code: "unknown_parameter")
        }
        guard let prompt = body["prompt"]?.string, !prompt.isEmpty else {
            return Self.invalid("Missing required parameter: 'prompt'.", param: "prompt", code: "missing_required_parameter")
        }
        let model = body["model"]?.string ?? "dall-e-2"
        guard Self.imageModels.contains(model) else {
            return Self.invalid(
                "Invalid value: '\(model)'. The sandbox draws with GPT image models: \(Self.imageModels.joined(separator: ", ")).", param: "model",
                code: "invalid_value")
        }
        if prompt.count > 32_000 {
            return Self.invalid(
                "Invalid 'prompt': string too long. Expected a string with maximum length 32000, but got a string with length \(prompt.count) instead.",
                param: "prompt", code: "string_above_max_length")
        }
        if body["response_format"] != nil {
            return Self.invalid("Unknown parameter: 'response_format'.", param: "response_format", code: "unknown_parameter")
        }
        let count = body["n"]?.int ?? 1
        guard (1...10).contains(count) else {
            return Self.invalid("Invalid 'n': expected a value between 1 and 10.", param: "n", code: "invalid_value")
        }
        let size = body["size"]?.string ?? "auto"
        guard Self.validImageSize(size, model: model) else {
            return Self.invalid(
                "Invalid value: '\(size)'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'.", param: "size",
                code: "invalid_value")
        }
        let quality = body["quality"]?.string ?? "auto"
        guard ["low", "medium", "high", "auto"].contains(quality) else {
            return Self.invalid(
                "Invalid value: '\(quality)'. Supported values are: 'low', 'medium', 'high', and 'auto'.", param: "quality", code: "invalid_value")
        }
        let format = body["output_format"]?.string ?? "png"
        guard format == "png" else {
            return Self.invalid("The sandbox emulator draws png images, not \(format).", param: "output_format", code: "unsupported_value")
        }
        if body["stream"]?.bool == true {
            return Self.invalid("The sandbox emulator does not stream images.", param: "stream", code: "unsupported_value")
        }
        if prompt.contains(Self.contentPolicyMarker) {
            return Self.apiError(
                .badRequest, type: "image_generation_user_error", code: "moderation_blocked",
                message:
                    "Your request was rejected as a result of our safety system. Your request may contain content that is not allowed by our safety system."
            )
        }
        let dimensions = Self.imageDimensions(size)
        let outputPerImage = ["low": 272, "medium": 1_056, "high": 4_160, "auto": 1_056][quality] ?? 1_056
        let inputTokens = Self.tokenEstimate(prompt)
        let images = (0..<count).map { index in
            RealtimeJSON.object(
                {
                    var item = RealtimeObject()
                    item["b64_json"] = .string(
                        SandboxPNG.picture(
                            prompt: prompt, variant: index, width: dimensions.width, height: dimensions.height,
                            detail: Self.pixelBlock[quality] ?? 2
                        ).base64EncodedString())
                    return item
                }())
        }
        let answer: RealtimeJSON = [
            "created": .int(Int(Date().timeIntervalSince1970)), "data": .array(images), "background": "opaque", "output_format": "png",
            "size": .string(size == "auto" ? "1024x1024" : size), "quality": .string(quality == "auto" ? "medium" : quality),
            "usage": [
                "input_tokens": .int(inputTokens), "output_tokens": .int(outputPerImage * count),
                "total_tokens": .int(inputTokens + outputPerImage * count),
                "input_tokens_details": ["text_tokens": .int(inputTokens), "image_tokens": 0],
                "output_tokens_details": ["image_tokens": .int(outputPerImage * count), "text_tokens": 0],
            ],
        ]
        return Self.json(answer)
    }

    /// How coarsely each quality is drawn: the picture is painted at 1/n of the size and enlarged, so `low` shows
    /// 4×4 blocks, `medium` (and `auto`) 2×2 and `high` full detail, as the real model's quality changes the detail,
    /// not the size.
    static let pixelBlock = ["low": 4, "medium": 2, "auto": 2, "high": 1]

    /// The pixels of a valid `size` (`auto` is drawn, and answered, as 1024×1024).
    static func imageDimensions(_ size: String) -> (width: Int, height: Int) {
        let sides = size.split(separator: "x").compactMap { Int($0) }
        guard sides.count == 2 else { return (1_024, 1_024) }
        return (sides[0], sides[1])
    }

    static func validImageSize(_ size: String, model: String) -> Bool {
        if ["1024x1024", "1536x1024", "1024x1536", "auto"].contains(size) { return true }
        guard model.hasPrefix("gpt-image-2") else { return false }
        let sides = size.split(separator: "x").compactMap { Int($0) }
        guard sides.count == 2, sides.allSatisfy({ $0 >= 16 && $0 % 16 == 0 }) else { return false }
        let (width, height) = (sides[0], sides[1])
        return max(width, height) <= 3_840 && min(width, height) <= 2_160 && max(width, height) <= 3 * min(width, height)
    }

    func moderation(_ request: Request) -> Response {
        guard let text = request.body.string, case .object(let body)? = RealtimeJSON.parse(text) else { return Self.unparsableJSON() }
        let inputs: [String]
        switch body["input"] {
        case .string(let value)?: inputs = [value]
        case .array(let values)? where values.allSatisfy({ $0.string != nil }): inputs = values.compactMap(\.string)
        case nil: return Self.invalid("Missing required parameter: 'input'.", param: "input", code: "missing_required_parameter")
        default: return Self.invalidType("input", expected: "a string or an array of strings", got: body["input"])
        }
        let model = body["model"]?.string ?? "omni-moderation-latest"
        let categories = [
            "hate", "hate/threatening", "harassment", "harassment/threatening", "illicit", "illicit/violent", "self-harm", "self-harm/intent",
            "self-harm/instructions", "sexual", "sexual/minors", "violence", "violence/graphic",
        ]
        let violent = ["kill", "blood", "weapon", "gun"]
        let results = inputs.map { input -> RealtimeJSON in
            let words = Set(input.lowercased().split(whereSeparator: { !$0.isLetter }).map(String.init))
            let flagged = input.contains("[sandbox:flag]") || !words.isDisjoint(with: violent)
            var flags = RealtimeObject()
            var scores = RealtimeObject()
            for category in categories {
                flags[category] = .bool(flagged && category == "violence")
                scores[category] = .double(flagged && category == "violence" ? 0.91 : 0.0004)
            }
            return ["flagged": .bool(flagged), "categories": .object(flags), "category_scores": .object(scores)]
        }
        return Self.json(["id": .string("modr-" + Self.randomHex(24)), "model": .string(model), "results": .array(results)])
    }
}

/// Valid PNGs of the sandbox's pictures, compressed without a compressor library: each row is `Sub`-filtered (flat
/// colour becomes runs of zero) and the rows are one fixed-Huffman deflate block whose only back-references repeat the
/// previous byte, so a 1024×1024 picture-book scene takes tens of kilobytes.
enum SandboxPNG {
    /// An RGB PNG of the picture ``SandboxPicture/paint(prompt:variant:width:height:)`` draws for `prompt`, with a
    /// `tEXt` chunk `prompt`; `detail` > 1 paints it that many times smaller and enlarges it (coarser blocks).
    static func picture(prompt: String, variant: Int, width: Int, height: Int, detail: Int = 1) -> Data {
        let block = max(1, min(detail, 8))
        let painted = SandboxPicture.paint(prompt: prompt, variant: variant, width: max(1, width / block), height: max(1, height / block))
        return encode(block == 1 ? painted : painted.enlarged(block, width: width, height: height), text: ["prompt": prompt])
    }

    /// `picture` as an 8-bit RGB PNG with `tEXt` chunks (non-ASCII bytes written as `?`, values cut at 2,000 bytes).
    static func encode(_ picture: SandboxPicture, text: [String: String] = [:]) -> Data {
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var header = Data()
        header.appendBigEndian(UInt32(picture.width))
        header.appendBigEndian(UInt32(picture.height))
        header.append(contentsOf: [8, 2, 0, 0, 0])  // 8-bit RGB, deflate, adaptive filtering, no interlace
        chunk("IHDR", header, into: &png)
        for (key, value) in text.sorted(by: { $0.key < $1.key }) {
            chunk("tEXt", Data(key.utf8) + Data([0]) + Data(value.utf8.prefix(2_000).map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }), into: &png)
        }
        chunk("IDAT", zlibDeflate(subFiltered(picture)), into: &png)
        chunk("IEND", Data(), into: &png)
        return png
    }

    /// The scanlines with filter type 1 (`Sub`: each byte minus the same channel of the pixel to its left).
    static func subFiltered(_ picture: SandboxPicture) -> [UInt8] {
        let stride = picture.width * 3
        var raw = [UInt8](repeating: 0, count: picture.height * (stride + 1))
        picture.pixels.withUnsafeBufferPointer { pixels in
            raw.withUnsafeMutableBufferPointer { out in
                for y in 0..<picture.height {
                    let row = y * stride
                    let target = y * (stride + 1)
                    out[target] = 1
                    for index in 0..<stride {
                        out[target + 1 + index] = index < 3 ? pixels[row + index] : pixels[row + index] &- pixels[row + index - 3]
                    }
                }
            }
        }
        return raw
    }

    /// A zlib stream of one fixed-Huffman deflate block: literals, and runs of a repeated byte as matches at distance 1.
    static func zlibDeflate(_ bytes: [UInt8]) -> Data {
        var writer = BitWriter()
        writer.out.reserveCapacity(bytes.count / 16 + 64)
        writer.out.append(contentsOf: [0x78, 0x01])
        writer.write(1, count: 1)  // BFINAL
        writer.write(1, count: 2)  // BTYPE 01: fixed Huffman codes
        bytes.withUnsafeBufferPointer { data in
            var index = 0
            while index < data.count {
                if index > 0 {
                    let previous = data[index - 1]
                    var run = 0
                    while run < 258, index + run < data.count, data[index + run] == previous { run += 1 }
                    if run >= 3 {
                        writer.writeLength(run)
                        writer.write(0, count: 5)  // distance code 0: distance 1
                        index += run
                        continue
                    }
                }
                writer.writeSymbol(Int(data[index]))
                index += 1
            }
        }
        writer.writeSymbol(256)
        writer.flush()
        var a: UInt32 = 1
        var b: UInt32 = 0
        bytes.withUnsafeBufferPointer { data in
            var index = 0
            // Sums of up to 5,552 bytes cannot overflow before the modulo (zlib's NMAX).
            while index < data.count {
                let end = min(data.count, index + 5_552)
                for position in index..<end {
                    a &+= UInt32(data[position])
                    b &+= a
                }
                a %= 65_521
                b %= 65_521
                index = end
            }
        }
        var out = Data(writer.out)
        out.appendBigEndian((b << 16) | a)
        return out
    }

    /// Deflate's bit order: values least significant bit first, Huffman codes most significant bit first.
    struct BitWriter {
        var out: [UInt8] = []
        private var buffer: UInt64 = 0
        private var count = 0

        mutating func write(_ value: Int, count bits: Int) {
            buffer |= UInt64(value) << UInt64(count)
            count += bits
            while count >= 8 {
                out.append(UInt8(truncatingIfNeeded: buffer))
                buffer >>= 8
                count -= 8
            }
        }

        /// A fixed-Huffman literal/length symbol (0…287).
        mutating func writeSymbol(_ symbol: Int) {
            let (code, length): (Int, Int) =
                switch symbol {
                case 0...143: (0x30 + symbol, 8)
                case 144...255: (0x190 + symbol - 144, 9)
                case 256...279: (symbol - 256, 7)
                default: (0xC0 + symbol - 280, 8)
                }
            var reversed = 0
            for bit in 0..<length where code & (1 << bit) != 0 { reversed |= 1 << (length - 1 - bit) }
            write(reversed, count: length)
        }

        /// The length symbol and extra bits for a match of `length` (3…258).
        mutating func writeLength(_ length: Int) {
            let bases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
            let extras = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
            let code = length == 258 ? 28 : (bases.lastIndex { $0 <= length } ?? 0)
            writeSymbol(257 + code)
            if extras[code] > 0 { write(length - bases[code], count: extras[code]) }
        }

        mutating func flush() {
            if count > 0 { out.append(UInt8(truncatingIfNeeded: buffer)) }
            buffer = 0
            count = 0
        }
    }

    private static func chunk(_ type: String, _ body: Data, into png: inout Data) {
        png.appendBigEndian(UInt32(body.count))
        let typed = Data(type.utf8) + body
        png.append(typed)
        png.appendBigEndian(crc32(typed))
    }

    private static let crcTable: [UInt32] = (0..<256).map { index -> UInt32 in
        var c = UInt32(index)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

extension Data {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
    }
}
