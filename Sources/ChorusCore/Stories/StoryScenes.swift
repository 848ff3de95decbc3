import Foundation

/// One illustrated moment of a story (seed 004 "Scene Extraction").
public struct StoryScene: Sendable, Equatable, Codable {
    public var number: Int
    /// Consecutive text of the story this scene illustrates.
    public var textSegment: String
    public var illustrationPrompt: String
    public var emotion: String
    public var importance: String
    /// When the scene starts in the narration, seconds (set from the real audio once narrated).
    public var timestampSeconds: Double?

    public init(number: Int, textSegment: String, illustrationPrompt: String, emotion: String, importance: String, timestampSeconds: Double? = nil) {
        self.number = number
        self.textSegment = textSegment
        self.illustrationPrompt = illustrationPrompt
        self.emotion = emotion
        self.importance = importance
        self.timestampSeconds = timestampSeconds
    }

    enum CodingKeys: String, CodingKey {
        case number = "scene_number"
        case textSegment = "text_segment"
        case illustrationPrompt = "illustration_prompt"
        case emotion, importance
        case timestampSeconds = "timestamp_seconds"
    }

    public static let emotions = ["joyful", "peaceful", "exciting", "mysterious", "heartwarming", "adventurous", "contemplative"]
    public static let importances = ["key", "major", "minor"]
}

/// How many scenes a story gets and how the model is asked for them.
public enum ScenePlan {
    /// The seed's rule, 1 scene per 15–20 s of narration (17.5 s is used), capped by the illustrations asked for;
    /// narration is estimated at 150 words a minute before it exists.
    public static func sceneCount(words: Int, illustrationCount: Int) -> Int {
        let seconds = Double(words) / Double(StoryPrompt.wordsPerMinute) * 60
        return max(0, min(illustrationCount, max(1, Int((seconds / 17.5).rounded()))))
    }

    public static let schemaName = "story_scenes"

    /// The answer's budget for `scenes` scenes: about 250 tokens each (an image prompt and its place in the text).
    public static func maxOutputTokens(scenes: Int) -> Int {
        200 + 250 * min(max(scenes, 1), 64)
    }

    /// Strict JSON Schema of the answer.
    public static let jsonSchema = """
        {
          "type": "object",
          "properties": {
            "scenes": {
              "type": "array",
              "items": {
                "type": "object",
                "properties": {
                  "scene_number": {"type": "integer"},
                  "text_segment": {"type": "string", "description": "Exact consecutive text copied from the story."},
                  "illustration_prompt": {"type": "string"},
                  "emotion": {"type": "string", "enum": ["joyful", "peaceful", "exciting", "mysterious", "heartwarming", "adventurous", "contemplative"]},
                  "importance": {"type": "string", "enum": ["key", "major", "minor"]}
                },
                "required": ["scene_number", "text_segment", "illustration_prompt", "emotion", "importance"],
                "additionalProperties": false
              }
            },
            "reasoning": {"type": "string"}
          },
          "required": ["scenes", "reasoning"],
          "additionalProperties": false
        }
        """

    /// The system message (the seed's scene-extraction instructions; English, since its output feeds the image model).
    public static let system = """
        You are an expert at analyzing children's bedtime stories and identifying key visual moments for illustration. \
        Choose scenes at natural narrative breaks and key emotional moments, with visual variety (settings, actions, \
        moods), spread evenly through the story: opening, key moments, resolution. For each scene copy its text segment \
        exactly from the story (one or two consecutive sentences) and write an illustration prompt in English that \
        describes the picture, always showing the main character exactly as described, child-friendly, bright and gentle.
        """

    /// The user message: the hero and their look, the story's language, how many scenes, then the story.
    public static func user(story: String, sceneCount: Int, heroName: String, heroDescription: String, language: StoryLanguage) -> String {
        """
        Main character: \(heroName)
        Appearance: \(heroDescription)
        The character must look identical in every scene: same colours, features, clothing and style.
        The story is written in \(language.displayName): copy each text segment exactly as it is written, in \(language.displayName), \
        and write the illustration prompts in English.
        Choose exactly \(sceneCount) scenes from this story:

        \(story)
        """
    }

    /// Reads the model's scenes and makes them usable: renumbered 1…n in story order, each segment located in the story
    /// (tolerating whitespace and quote differences), unknown emotions/importances replaced, at most `count`. Scenes
    /// whose text is not in the story are dropped; when fewer than half remain, ``fallback(story:count:heroName:)`` is
    /// the better choice and ``SceneError/unusable`` is thrown.
    public static func decode(json: Data, story: String, count: Int) throws -> [StoryScene] {
        struct Answer: Decodable { var scenes: [StoryScene] }
        let answer = try JSONDecoder().decode(Answer.self, from: json)
        let located = answer.scenes.compactMap { scene -> (offset: Int, scene: StoryScene)? in
            guard let offset = TextLocator.offset(of: scene.textSegment, in: story) else { return nil }
            var scene = scene
            if !StoryScene.emotions.contains(scene.emotion) { scene.emotion = "peaceful" }
            if !StoryScene.importances.contains(scene.importance) { scene.importance = "minor" }
            return (offset, scene)
        }
        .sorted { $0.offset < $1.offset }
        var seen = Set<Int>()
        let unique = located.filter { seen.insert($0.offset).inserted }.prefix(count)
        guard count == 0 || unique.count * 2 >= count, !(count > 0 && unique.isEmpty) else { throw SceneError.unusable }
        return unique.enumerated().map { index, item in
            var scene = item.scene
            scene.number = index + 1
            return scene
        }
    }

    /// Deterministic scenes when the model's are unusable: `count` sentences spread evenly through the story, each with
    /// a gentle generic picture of the hero.
    public static func fallback(story: String, count: Int, heroName: String) -> [StoryScene] {
        let sentences = TextLocator.sentences(in: story)
        guard count > 0, !sentences.isEmpty else { return [] }
        let picked = min(count, sentences.count)
        var picks: [String] = []
        for index in 0..<picked {
            let position = (Double(index) + 0.5) * Double(sentences.count) / Double(picked)
            picks.append(sentences[Int(position)])
        }
        var scenes: [StoryScene] = []
        for (index, sentence) in picks.enumerated() {
            let prompt = heroName + " in a gentle bedtime picture-book scene: " + sentence
            let emotion = index == 0 ? "peaceful" : "heartwarming"
            let importance = index == 0 || index == picks.count - 1 ? "key" : "minor"
            scenes.append(StoryScene(number: index + 1, textSegment: sentence, illustrationPrompt: prompt, emotion: emotion, importance: importance))
        }
        return scenes
    }
}

/// Why scenes could not be used.
public enum SceneError: Error, Sendable, Equatable {
    case unusable
}

/// Scene timestamps from the real narration: the text was spoken in parts (split for the provider's limit), each
/// with its measured duration; a scene starts where its text starts, interpolated by characters inside its part.
public enum SceneTiming {
    /// One spoken part.
    public struct Part: Sendable, Equatable {
        public var text: String
        public var durationSeconds: Double

        public init(text: String, durationSeconds: Double) {
            self.text = text
            self.durationSeconds = durationSeconds
        }
    }

    /// `scenes` with ``StoryScene/timestampSeconds`` set; never decreasing, within the total duration.
    public static func timestamps(for scenes: [StoryScene], story: String, parts: [Part]) -> [StoryScene] {
        // Where each part starts in the story, and in time.
        var partStarts: [(offset: Int, time: Double, part: Part)] = []
        var searchFrom = story.startIndex
        var time = 0.0
        for part in parts {
            let start =
                TextLocator.offset(of: String(part.text.prefix(60)), in: story, from: searchFrom)
                ?? story.distance(from: story.startIndex, to: searchFrom)
            partStarts.append((start, time, part))
            searchFrom = story.index(story.startIndex, offsetBy: min(story.count, start + part.text.count))
            time += part.durationSeconds
        }
        let total = time
        var previous = 0.0
        return scenes.map { scene in
            var scene = scene
            let offset = TextLocator.offset(of: scene.textSegment, in: story) ?? 0
            var stamp = 0.0
            if let part = partStarts.last(where: { $0.offset <= offset }) ?? partStarts.first {
                let within = Double(max(0, offset - part.offset)) / Double(max(1, part.part.text.count))
                stamp = part.time + min(1, within) * part.part.durationSeconds
            }
            stamp = min(total, max(previous, stamp))
            previous = stamp
            scene.timestampSeconds = (stamp * 100).rounded() / 100
            return scene
        }
    }
}

/// Finding model-quoted text in a story, forgiving whitespace and typographic quotes.
enum TextLocator {
    /// The character offset of `needle` in `haystack` (searching from `from`), or `nil`.
    static func offset(of needle: String, in haystack: String, from: String.Index? = nil) -> Int? {
        let trimmed = needle.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        let start = from ?? haystack.startIndex
        if let range = haystack.range(of: trimmed, range: start..<haystack.endIndex) {
            return haystack.distance(from: haystack.startIndex, to: range.lowerBound)
        }
        // Normalised: whitespace runs collapsed, curly quotes straight; offsets mapped back through an index table.
        let (normalHay, map) = normalized(String(haystack[start...]))
        let (normalNeedle, _) = normalized(trimmed)
        guard let range = normalHay.range(of: normalNeedle) else { return nil }
        let index = normalHay.distance(from: normalHay.startIndex, to: range.lowerBound)
        return haystack.distance(from: haystack.startIndex, to: start) + map[index]
    }

    private static func normalized(_ text: String) -> (String, [Int]) {
        var output = ""
        var map: [Int] = []
        var lastWasSpace = false
        for (index, character) in text.enumerated() {
            var c = character
            if "“”„«»".contains(c) { c = "\"" } else if "‘’".contains(c) { c = "'" }
            if c.isWhitespace {
                if lastWasSpace { continue }
                c = " "
                lastWasSpace = true
            } else {
                lastWasSpace = false
            }
            output.append(c)
            map.append(index)
        }
        return (output, map)
    }

    /// The story's sentences, trimmed (split after `.`, `!`, `?` and `…` followed by whitespace).
    static func sentences(in text: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        var previous: Character?
        for character in text {
            if character.isWhitespace, let last = previous, ".!?…".contains(last) {
                let sentence = current.trimmingCharacters(in: .whitespacesAndNewlines)
                if !sentence.isEmpty { sentences.append(sentence) }
                current = ""
            } else {
                current.append(character)
            }
            previous = character
        }
        let last = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !last.isEmpty { sentences.append(last) }
        return sentences
    }
}
