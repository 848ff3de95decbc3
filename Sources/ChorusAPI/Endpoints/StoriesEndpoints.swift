extension API.Stories {
    // MARK: Heroes

    /// `POST /heroes`: creates a hero (201).
    public static let createHero = Endpoint<HeroRequest, HeroDTO>(.post, "/heroes", status: 201)
    /// `GET /heroes`: the user's heroes, oldest first.
    public static let heroes = Endpoint<NoContent, HeroesResponse>(.get, "/heroes")
    /// `GET /heroes/{hero_id}`: one of the user's heroes.
    public static let hero = Endpoint<NoContent, HeroDTO>(.get, "/heroes/{hero_id}")
    /// `PUT /heroes/{hero_id}`: replaces the hero; a changed look drops its visual profile.
    public static let updateHero = Endpoint<HeroRequest, HeroDTO>(.put, "/heroes/{hero_id}")
    /// `DELETE /heroes/{hero_id}`: deletes the hero and its avatar (204).
    public static let deleteHero = Endpoint<NoContent, NoContent>(.delete, "/heroes/{hero_id}")
    /// `POST /heroes/{hero_id}/avatar`: draws the hero's avatar.
    public static let generateAvatar = Endpoint<AvatarRequest, HeroDTO>(.post, "/heroes/{hero_id}/avatar")

    // MARK: Voices and events

    /// `GET /stories/voices`: the storytelling voices.
    public static let voices = Endpoint<NoContent, StoryVoicesResponse>(.get, "/stories/voices")
    /// `GET /stories/events?language=`: the built-in events in a language.
    public static let events = Endpoint<NoContent, StoryEventsResponse>(.get, "/stories/events")
    /// `POST /stories/custom-events`: saves a custom event (201).
    public static let createCustomEvent = Endpoint<CustomEventRequest, StoryEventDTO>(.post, "/stories/custom-events", status: 201)
    /// `GET /stories/custom-events`: the user's custom events.
    public static let customEvents = Endpoint<NoContent, StoryEventsResponse>(.get, "/stories/custom-events")
    /// `DELETE /stories/custom-events/{event_id}`: deletes a custom event (204).
    public static let deleteCustomEvent = Endpoint<NoContent, NoContent>(.delete, "/stories/custom-events/{event_id}")
    /// `POST /stories/custom-events/assist`: the assistant's title, prompt seed, keywords and similar events.
    public static let assist = Endpoint<EventAssistRequest, EventAssistResponse>(.post, "/stories/custom-events/assist")

    // MARK: Stories

    /// `POST /stories`: starts a story (202 with its id and a `Location`).
    public static let createStory = Endpoint<CreateStoryRequest, StoryAcceptedDTO>(.post, "/stories", status: 202)
    /// `GET /stories?limit=&cursor=`: one page of the user's library, newest first.
    public static let library = Endpoint<NoContent, StoriesPage>(.get, "/stories")
    /// `GET /stories/{story_id}`: the story with its stages, text, scenes, narration, illustrations and cost.
    public static let story = Endpoint<NoContent, StoryDTO>(.get, "/stories/{story_id}")
    /// `DELETE /stories/{story_id}`: stops the story's work and deletes it and its files (204).
    public static let deleteStory = Endpoint<NoContent, NoContent>(.delete, "/stories/{story_id}")
    /// `GET /stories/{story_id}/events`: the story's progress as server-sent events (``StoryProgressDTO``).
    public static let progress = Endpoint<NoContent, RawContent>(.get, "/stories/{story_id}/events")
    /// `POST /stories/{story_id}/illustrations/{number}/retry`: draws a failed illustration again (202).
    public static let retryIllustration = Endpoint<NoContent, StoryDTO>(.post, "/stories/{story_id}/illustrations/{number}/retry", status: 202)
    /// `GET /stories/files/{folder}/{owner_id}/{file_name}?expires=&signature=`: a story or hero file by signed URL
    /// (audio or a picture, with `Range` support).
    public static let file = Endpoint<NoContent, RawContent>(.get, "/stories/files/{folder}/{owner_id}/{file_name}")

    /// Every endpoint of this area, for the table API/all.
    public static let endpoints: [AnyEndpoint] = [
        createHero.erased, heroes.erased, hero.erased, updateHero.erased, deleteHero.erased, generateAvatar.erased,
        voices.erased, events.erased, createCustomEvent.erased, customEvents.erased, deleteCustomEvent.erased, assist.erased,
        createStory.erased, library.erased, story.erased, deleteStory.erased, progress.erased, retryIllustration.erased,
        file.erased,
    ]
}
