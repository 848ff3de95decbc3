import ChorusCore
import ChorusProviders
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import ChorusSandbox

/// The OpenAI emulator's Stories side through the real clients: stories in five languages, scenes, visual profiles,
/// the assistant, streamed completions, pictures, moderation and per-request faults.
@Suite("Sandbox OpenAI: stories, pictures, moderation, faults")
struct SandboxStoriesTests {
    static func brief(_ language: StoryLanguage, minutes: Int = 2) -> StoryBrief {
        StoryBrief(
            language: language, heroName: "Nora", heroTraits: ["gentle", "funny"], heroAppearance: "a girl with brown hair",
            event: "A picnic: Nora shares her sandwiches", lengthMinutes: minutes)
    }

    static func storyRequest(_ brief: StoryBrief) -> TextGenerationRequest {
        TextGenerationRequest(
            model: "gpt-4.1-mini",
            messages: [
                ChatMessage(role: .system, content: StoryPrompt.system(brief.language)), ChatMessage(role: .user, content: StoryPrompt.user(brief)),
            ])
    }

    @Test("stories honour language, hero, traits, event and length; the same prompt gives the same story", arguments: StoryLanguage.allCases)
    func stories(_ language: StoryLanguage) async throws {
        try await withOpenAI { harness in
            let brief = Self.brief(language, minutes: 3)
            let first = try StoryText.parse(try await harness.generator().generate(Self.storyRequest(brief)).content)
            let again = try StoryText.parse(try await harness.generator().generate(Self.storyRequest(brief)).content)
            #expect(first == again)
            // Traits in the story's language; a custom English event is told only in English.
            let traits: [StoryLanguage: [String]] = [
                .en: ["was gentle", "was funny"], .es: ["su dulzura", "su sentido del humor"], .fr: ["de sa douceur", "de son humour"],
                .de: ["die Sanftheit von Nora", "den Humor von Nora"], .it: ["della sua dolcezza", "del suo umorismo"],
            ]
            #expect(first.title.contains("Nora"))
            for trait in traits[language]! { #expect(first.content.contains(trait), "\(language): \(trait)") }
            if language == .en {
                #expect(first.content.contains("a special day for Nora: A picnic. Nora shares her sandwiches."))
            } else {
                for english in ["gentle", "funny", "picnic", "sandwiches"] { #expect(!first.content.contains(english), "\(language): \(english)") }
            }
            #expect(abs(first.wordCount - 450) <= 23, "\(first.wordCount) words")
            let sentences = first.content.components(separatedBy: ". ")
            #expect(Set(sentences).count == sentences.count, "every sentence differs, so scenes can be located")
            let marker: [StoryLanguage: String] = [
                .en: "Once upon a time", .es: "Había una vez", .fr: "Il était une fois", .de: "Es war einmal", .it: "C'era una volta",
            ]
            #expect(first.content.hasPrefix(marker[language]!))
        }
    }

    @Test("the product's own events and traits read in the story's language; unknown traits are not pasted", arguments: StoryLanguage.allCases)
    func catalogEventInEveryLanguage(_ language: StoryLanguage) async throws {
        try await withOpenAI { harness in
            let school = try #require(StoryEventCatalog.event("first_day_of_school"))
            let brief = StoryBrief(
                language: language, heroName: "Mia", heroTraits: ["brave", "loves dinosaurs"], heroAppearance: "a girl with red hair",
                event: "\(school.title(language)): \(school.promptSeed(language))", lengthMinutes: 2)
            let story = try StoryText.parse(try await harness.generator().generate(Self.storyRequest(brief)).content)
            let expected: [StoryLanguage: [String]] = [
                .en: ["a special day for Mia: first day of school. Mia discovers that a new classroom", "Mia was brave", "Mia had many other good qualities"],
                .es: ["un día especial para Mia: el primer día de colegio. Mia descubre que una clase nueva", "su valentía", "Mia tenía también otras cualidades"],
                .fr: ["un jour spécial pour Mia : le premier jour d'école. Mia découvre qu'une nouvelle classe", "de son courage", "Mia avait aussi bien d'autres qualités"],
                .de: ["eines besonderen Tages für Mia: der erste Schultag. Mia entdeckt, dass ein neues Klassenzimmer", "den Mut von Mia", "Mia hatte noch viele andere gute Seiten"],
                .it: ["un giorno speciale per Mia: il primo giorno di scuola. Mia scopre che una nuova classe", "del suo coraggio", "Mia aveva anche tante altre qualità"],
            ]
            for phrase in expected[language]! { #expect(story.content.contains(phrase), "\(language): \(phrase)") }
            for pasted in ["The hero", "Le héros", "El héroe", "Der Held", "L'eroe", "dinosaurs"] {
                #expect(!story.content.contains(pasted), "\(language): \(pasted)")
            }
            if language != .en { #expect(!story.content.contains("brave") || language == .fr, "\(language)") }
        }
    }

    @Test("the emulator reads the prompt a real model gets: hero, traits, event, language and length from the prose", arguments: StoryLanguage.allCases)
    func readsTheProse(_ language: StoryLanguage) throws {
        let brief = StoryBrief(
            language: language, heroName: "Dr. Anna-Lena", heroTraits: ["brave", "loves dinosaurs", "kind"], heroAppearance: "red hair",
            event: "Rainy day: Anna-Lena builds a blanket fort", lengthMinutes: 7)
        let user = StoryPrompt.user(brief)
        // Nothing for the sandbox: no JSON line, only what the model needs.
        #expect(!user.contains("{\"") && !user.contains("\"task\""))
        let read = try #require(StoryRequest.read(system: StoryPrompt.system(language).lowercased(), user: user))
        #expect(
            read
                == StoryRequest(
                    language: language, hero: "Dr. Anna-Lena", traits: ["brave", "loves dinosaurs", "kind"],
                    event: "Rainy day: Anna-Lena builds a blanket fort", targetWords: 1_050))
        // Without the system message, the user message's own wording names the language.
        #expect(StoryRequest.read(system: "", user: user)?.language == language)
    }

    @Test("prompts it cannot fully read still get a plausible story, never an error")
    func partialPrompts() async throws {
        // Only the storyteller's system message: a default hero, about 300 words, in the system message's language.
        let vague = try #require(StoryRequest.read(system: StoryPrompt.system(.de).lowercased(), user: "Erzähl mir bitte etwas Schönes."))
        #expect(vague == StoryRequest(language: .de, hero: StoryRequest.defaultHero, traits: [], event: "", targetWords: 300))
        // Absurd lengths are brought into range; a number too large for an Int is no number.
        let huge = "Create a 3-minute bedtime story about Max.\n\nRequirements:\n- about 99999999999999999999999 words"
        #expect(StoryRequest.read(system: "", user: huge)?.targetWords == 450)
        let long = "Create a 3-minute bedtime story about Max.\n\nRequirements:\n- about 90000 words"
        #expect(StoryRequest.read(system: "", user: long)?.targetWords == StoryRequest.words.upperBound)
        let empty = "Create a 3-minute bedtime story about .\nCharacter traits:\nStory event:"
        #expect(StoryRequest.read(system: "", user: empty) == StoryRequest(language: .en, hero: StoryRequest.defaultHero, traits: [], event: "", targetWords: 450))
        // Not a story at all: the generic emulator answers.
        #expect(StoryRequest.read(system: "you summarise conversations.", user: "Summarise: we meet at 5.") == nil)

        try await withOpenAI { harness in
            let generator = harness.generator()
            for user in ["?", "Character traits: : , ,\nStory event:\n- words", "bedtime story about", String(repeating: "Aspecto: x\n", count: 200)] {
                let answer = try await generator.generate(
                    TextGenerationRequest(
                        model: "gpt-4.1-mini",
                        messages: [ChatMessage(role: .system, content: StoryPrompt.system(.es)), ChatMessage(role: .user, content: user)]))
                let story = try StoryText.parse(answer.content)
                #expect(story.content.hasPrefix("Había una vez") && story.wordCount >= 60, "\(user.prefix(40))")
            }
            // A scenes request without its story: no scenes, still the strict answer.
            let noStory = try await generator.generate(
                TextGenerationRequest(
                    model: "gpt-4.1-mini",
                    messages: [ChatMessage(role: .system, content: ScenePlan.system), ChatMessage(role: .user, content: "Choose exactly 3 scenes.")],
                    format: StructuredOutputFormat(name: ScenePlan.schemaName, schemaJSON: ScenePlan.jsonSchema)))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(noStory.content.utf8)) as? [String: Any])
            #expect((object["scenes"] as? [Any])?.isEmpty == true && object["reasoning"] is String)
        }
    }

    @Test("scenes, visual profile and assistant answers follow their strict schemas and decode")
    func structuredAnswers() async throws {
        try await withOpenAI { harness in
            let generator = harness.generator()
            let story = try StoryText.parse(try await generator.generate(Self.storyRequest(Self.brief(.en, minutes: 4))).content)
            let scenesAnswer = try await generator.generate(
                TextGenerationRequest(
                    model: "gpt-4.1-mini",
                    messages: [
                        ChatMessage(role: .system, content: ScenePlan.system),
                        ChatMessage(
                            role: .user,
                            content: ScenePlan.user(
                                story: story.content, sceneCount: 5, heroName: "Nora", heroDescription: "brown hair", language: .en)),
                    ], format: StructuredOutputFormat(name: ScenePlan.schemaName, schemaJSON: ScenePlan.jsonSchema)))
            let scenes = try ScenePlan.decode(json: Data(scenesAnswer.content.utf8), story: story.content, count: 5)
            #expect(scenes.map(\.number) == [1, 2, 3, 4, 5] && scenes.allSatisfy { $0.illustrationPrompt.hasPrefix("Scene \($0.number):") })
            #expect(scenes.allSatisfy { $0.illustrationPrompt.contains("Nora in a soft picture-book landscape") })
            for prompt in [ScenePlan.user(story: story.content, sceneCount: 5, heroName: "Nora", heroDescription: "brown hair", language: .en)] {
                #expect(!prompt.contains("{\"") && prompt.contains("Choose exactly 5 scenes"))
            }

            let prompt = HeroVisualProfile.prompt(
                heroName: "Nora", appearance: "a girl with long brown hair, blue eyes, wearing a green dress", avatarPrompt: nil)
            let profileAnswer = try await generator.generate(
                TextGenerationRequest(
                    model: "gpt-4.1-mini",
                    messages: [ChatMessage(role: .system, content: prompt.system), ChatMessage(role: .user, content: prompt.user)],
                    format: StructuredOutputFormat(name: HeroVisualProfile.schemaName, schemaJSON: HeroVisualProfile.jsonSchema)))
            #expect(!prompt.user.contains("{\""))
            let profile = try HeroVisualProfile.decode(json: Data(profileAnswer.content.utf8))
            #expect(profile.hairColor == "brown" && profile.hairStyle == "long" && profile.eyeColor == "blue" && profile.clothingColors == "green")

            let assist = EventAssistPrompt.prompt(
                title: nil, description: "Our cat had kittens in the laundry basket", category: "pets", ageRange: "4-6", tone: "warm", language: .it)
            let assistAnswer = try await generator.generate(
                TextGenerationRequest(
                    model: "gpt-4.1-mini",
                    messages: [ChatMessage(role: .system, content: assist.system), ChatMessage(role: .user, content: assist.user)],
                    format: StructuredOutputFormat(name: EventAssistPrompt.schemaName, schemaJSON: EventAssistPrompt.jsonSchema)))
            #expect(!assist.user.contains("{\""))
            let answer = try EventAssistPrompt.decode(json: Data(assistAnswer.content.utf8))
            #expect(answer.title == "Our cat had kittens" && answer.promptSeed.hasPrefix("Una storia affettuosa per bambini di 4-6 anni") && answer.similarEvents.count == 3)
            #expect(answer.keywords.contains("kittens") && answer.keywords.contains("pets"))
            #expect(answer.similarEvents == ["Una prima avventura", "Una giornata speciale con gli amici", "Provare qualcosa di nuovo"])
        }
    }

    @Test("a streamed completion arrives in pieces that join into the same text, with usage")
    func streaming() async throws {
        try await withOpenAI { harness in
            let request = Self.storyRequest(Self.brief(.de))
            let whole = try await harness.generator().generate(request)
            let pieces = NIOLockedValueBox<[String]>([])
            let streamed = try await harness.generator().stream(request) { piece in pieces.withLockedValue { $0.append(piece) } }
            #expect(pieces.withLockedValue { $0.count } > 10)
            #expect(pieces.withLockedValue { $0.joined() } == whole.content && streamed.content == whole.content)
            #expect(
                streamed.promptTokens == whole.promptTokens && streamed.completionTokens == whole.completionTokens && streamed.completionTokens > 0)

            var refused = Self.storyRequest(Self.brief(.en))
            refused.messages.append(ChatMessage(role: .user, content: "[sandbox:refuse]"))
            await #expect(throws: TextGenerationError.self) { _ = try await harness.generator().stream(refused) { _ in } }
        }
    }

    @Test("pictures are valid PNGs that differ by prompt; a refused prompt is a content-policy error; moderation flags")
    func picturesAndModeration() async throws {
        try await withOpenAI { harness in
            let images = OpenAIImageGenerator(connection: harness.connection())
            let first = try await images.generate(
                ImageGenerationRequest(model: "gpt-image-2", prompt: "A fox in a garden", size: "1024x1024", quality: "low"))
            let second = try await images.generate(
                ImageGenerationRequest(model: "gpt-image-2", prompt: "A bear on a boat", size: "1536x1024", quality: "high"))
            #expect(first.png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) && first.png != second.png)
            #expect(first.outputTokens == 272 && second.outputTokens == 4_160 && (first.inputTokens ?? 0) > 0)
            #expect(String(decoding: first.png, as: UTF8.self).contains("A fox in a garden"), "the prompt rides in a tEXt chunk")
            // Chunk checksums are the standard CRC-32 (IEND's is the well-known AE426082).
            #expect(SandboxPNG.crc32(Data("IEND".utf8)) == 0xAE42_6082)
            await #expect(throws: ImageGenerationError.self) {
                _ = try await images.generate(
                    ImageGenerationRequest(model: "gpt-image-2", prompt: "x [sandbox:content_policy]", size: "1024x1024", quality: "low"))
            }
            await #expect(throws: ProviderError.self) {
                _ = try await images.generate(ImageGenerationRequest(model: "gpt-image-2", prompt: "x", size: "1000x1000", quality: "low"))
            }
            let moderator = OpenAIModerator(connection: harness.connection())
            #expect(
                try await moderator.moderate("A picnic with friends", model: "omni-moderation-latest")
                    == ModerationResult(flagged: false, categories: []))
            #expect(
                try await moderator.moderate("He took a gun", model: "omni-moderation-latest")
                    == ModerationResult(flagged: true, categories: ["violence"]))
        }
    }

    @Test("faults hit only the requests they match, as many times as asked, and time out slow enough for a short deadline")
    func faults() async throws {
        try await withOpenAI { harness in
            let status = try await harness.putBehavior(
                #"{"faults":[{"kind":"rate_limit","endpoint":"images/generations","match":"Scene 2","retry_after_seconds":2},"#
                    + #"{"kind":"timeout","endpoint":"images/generations","match":"Scene 3","delay_ms":1500}]}"#)
            #expect(status == 200)
            let images = OpenAIImageGenerator(connection: harness.connection(retry: .none))
            func draw(_ prompt: String) async throws -> GeneratedImage {
                try await images.generate(ImageGenerationRequest(model: "gpt-image-2", prompt: prompt, size: "1024x1024", quality: "low"))
            }
            _ = try await draw("Scene 1: fine")
            do {
                _ = try await draw("Scene 2: limited")
                Issue.record("the rate limit is injected")
            } catch let ProviderError.rateLimited(retryAfter, _) {
                #expect(retryAfter == .seconds(2))
            }
            _ = try await draw("Scene 2: limited")  // used up
            let short = OpenAIImageGenerator(
                connection: OpenAIConnection(
                    apiKey: OpenAIHarness.apiKey, baseURL: harness.apiURL, httpClient: .shared, timeout: .milliseconds(500), retry: .none,
                    logger: .init(label: "test")))
            do {
                _ = try await short.generate(ImageGenerationRequest(model: "gpt-image-2", prompt: "Scene 3: slow", size: "1024x1024", quality: "low"))
                Issue.record("the slow answer times out")
            } catch let error as ProviderError {
                #expect(error == .unavailable("openai timed out"))
            }
            #expect(try await harness.putBehavior(#"{"faults":[{"kind":"explode"}]}"#) == 400)
            #expect(try await harness.putBehavior(#"{"faults":[{"kind":"timeout","times":0}]}"#) == 400)
        }
    }
}
