import Crypto
import Foundation
import Vapor

/// `POST /images/generations` and `POST /moderations` of ``SandboxOpenAI``.
///
/// **Images** (`CreateImageRequest` for GPT image models): `model` and `prompt` required; `n` 1–10; `size`
/// `1024x1024`, `1536x1024`, `1024x1536`, `auto` (any `WxH` with both sides divisible by 16, up to 3840x2160, for
/// `gpt-image-2*`); `quality` low, medium, high, auto; `output_format` png (jpeg and webp are refused: the sandbox has
/// no encoder); `response_format` is refused as GPT image models refuse it. The answer is `{created, data:
/// [{b64_json}], output_format, size, quality, usage}` where each image is a valid 64×64 PNG whose colours come from a
/// hash of the prompt (different prompts, different pictures) and whose `tEXt` chunk `prompt` holds the prompt.
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
        let outputPerImage = ["low": 272, "medium": 1_056, "high": 4_160, "auto": 1_056][quality] ?? 1_056
        let inputTokens = Self.tokenEstimate(prompt)
        let images = (0..<count).map { index in
            RealtimeJSON.object(
                {
                    var item = RealtimeObject()
                    item["b64_json"] = .string(SandboxPNG.picture(prompt: prompt, variant: index).base64EncodedString())
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

/// Small valid PNGs (stored deflate blocks, so no compressor is needed) that differ by prompt.
enum SandboxPNG {
    static let side = 64

    /// A 64×64 RGB picture: a vertical gradient between two colours taken from SHA-256(prompt, variant), a sun whose
    /// place comes from the hash, and a `tEXt` chunk `prompt`.
    static func picture(prompt: String, variant: Int) -> Data {
        let digest = Array(SHA256.hash(data: Data("\(variant)|\(prompt)".utf8)))
        let top = (digest[0], digest[1], digest[2])
        let bottom = (digest[3], digest[4], digest[5])
        let sunX = Int(digest[6]) % side
        let sunY = Int(digest[7]) % (side / 2)
        var raw = [UInt8]()
        raw.reserveCapacity(side * (side * 3 + 1))
        for y in 0..<side {
            raw.append(0)  // filter: none
            for x in 0..<side {
                if (x - sunX) * (x - sunX) + (y - sunY) * (y - sunY) < 36 {
                    raw.append(contentsOf: [255, 221, 87])
                    continue
                }
                func mix(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8((Int(a) * (side - y) + Int(b) * y) / side) }
                raw.append(contentsOf: [mix(top.0, bottom.0), mix(top.1, bottom.1), mix(top.2, bottom.2)])
            }
        }
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var header = Data()
        header.appendBigEndian(UInt32(side))
        header.appendBigEndian(UInt32(side))
        header.append(contentsOf: [8, 2, 0, 0, 0])  // 8-bit RGB, deflate, adaptive filtering, no interlace
        chunk("IHDR", header, into: &png)
        chunk("tEXt", Data("prompt".utf8) + Data([0]) + Data(prompt.utf8.prefix(2_000).map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }), into: &png)
        chunk("IDAT", zlibStored(raw), into: &png)
        chunk("IEND", Data(), into: &png)
        return png
    }

    private static func chunk(_ type: String, _ body: Data, into png: inout Data) {
        png.appendBigEndian(UInt32(body.count))
        let typed = Data(type.utf8) + body
        png.append(typed)
        png.appendBigEndian(crc32(typed))
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    static func zlibStored(_ bytes: [UInt8]) -> Data {
        var out = Data([0x78, 0x01])
        var offset = 0
        repeat {
            let length = min(65_535, bytes.count - offset)
            let final: UInt8 = offset + length == bytes.count ? 1 : 0
            out.append(final)
            out.append(UInt8(length & 0xFF))
            out.append(UInt8(length >> 8))
            out.append(UInt8(~length & 0xFF))
            out.append(UInt8((~length >> 8) & 0xFF))
            out.append(contentsOf: bytes[offset..<(offset + length)])
            offset += length
        } while offset < bytes.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        out.appendBigEndian((b << 16) | a)
        return out
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
