import ChorusAPI
import ChorusKit
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Heroes and stories through the SDK against a real server over loopback (sandbox providers).
@Suite("ChorusKit heroes and stories (live server)")
struct StoriesClientTests {
    @Test("create a hero and its avatar, follow a Spanish story's progress to the end, page the library, retry and delete")
    func heroStoryProgress() async throws {
        try await LiveServer.run(environment: ["CHORUS_STORIES_ILLUSTRATION_SPACING_SECONDS": "0"]) { server in
            let parent = try await MessagingPerson.register(on: server, name: "Parent")
            let hero = try await parent.chorus.heroes.create(
                HeroRequest(name: "Lucía", traits: ["curiosa", "valiente"], appearance: "a girl with black hair and brown eyes"))
            let drawn = try await parent.chorus.heroes.generateAvatar(hero.id)
            #expect(drawn.avatarURL != nil && drawn.visualProfile?.hairColor == "black")
            // An HD avatar replaces it (a new picture, the same look).
            let hd = try await parent.chorus.heroes.generateAvatar(hero.id, quality: .hd)
            #expect(hd.avatarURL != nil && hd.avatarURL != drawn.avatarURL && hd.visualProfile == drawn.visualProfile)
            #expect(try await parent.chorus.heroes.list().map(\.id) == [hero.id])

            let events = try await parent.chorus.stories.events(language: "es")
            #expect(events.first?.title == "El primer día de colegio")
            #expect(try await parent.chorus.stories.voices().count == 7)

            let id = try await parent.chorus.stories.create(
                CreateStoryRequest(heroID: hero.id, eventID: "birthday", lengthMinutes: 3, language: "es", voice: "nova", illustrationCount: 3))
            var seen: [StoryDTO] = []
            for try await story in parent.chorus.stories.progress(of: id, interval: .milliseconds(100)) { seen.append(story) }
            let last = try #require(seen.last)
            #expect(last.stages == StoryStagesDTO(text: "succeeded", scenes: "succeeded", narration: "succeeded", illustrations: "succeeded"))
            #expect(last.content?.contains("Lucía") == true && last.content?.contains("curiosidad") == true && last.illustrations.count == 3)
            #expect(seen.count >= 2, "progress yields each change, then ends")

            let page = try await parent.chorus.stories.library(limit: 1)
            #expect(page.stories.map(\.id) == [id] && page.nextCursor == nil)
            await #expect(throws: ChorusError.self) { try await parent.chorus.stories.retryIllustration(story: id, number: 1) }
            try await parent.chorus.stories.delete(id)
            await #expect(throws: ChorusError.self) { try await parent.chorus.stories.story(id) }
            try await parent.chorus.heroes.delete(hero.id)
            #expect(try await parent.chorus.heroes.list().isEmpty)
        }
    }
}
