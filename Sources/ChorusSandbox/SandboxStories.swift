import ChorusCore
import Foundation

/// The Stories tasks of the chat emulator. It reads the prompt a real model gets (issue 21: Chorus sends nothing
/// for the sandbox's sake): the task is recognised from the system message's wording, and what was asked is read from
/// the prose of the user message as written in each story language (the labelled lines `Character traits:`,
/// `Rasgos del personaje:`, `Traits de caractère :`, …, the hero after "bedtime story about" and its translations, the
/// length from "about 450 words"). A prompt it cannot fully read still gets a plausible answer (a default hero, no
/// traits, the language the text looks written in, about 300 words), never an error:
/// - story (plain text; the storyteller's system message in any of the five languages): a calm story in the asked
///   language (English, Spanish, French, German, Italian) about the hero, of the asked number of words (±5 %), as
///   `Title\n\nParagraph…`; deterministic for the same prompt. Everything reads in the story's language (see
///   ``SandboxStoryVocabulary``): the product's own events are told with their title and prompt seed in that
///   language, the hero's name standing for "the hero"; a custom event only when written in that language; known
///   traits in the language's wording, unknown ones (except one English word in English) as "other qualities";
/// - scenes (the scene analyst's system message): as many scenes as "Choose exactly N scenes" asks, whose text
///   segments are sentences copied from the story after "from this story:", spread evenly, with illustration prompts
///   that start `Scene N:`;
/// - visual profile (the illustrators' describer): the profile read from the description and appearance (`red curly
///   hair`, `green eyes`, `wears a yellow raincoat`, …), `null` where they say nothing;
/// - event assistant (the bedtime-story-event helper): a title (kept when given), a prompt seed in the asked language
///   (a known tone in its words, an unknown one left out outside English), keywords and three similar events in that
///   language.
enum SandboxStories {
    /// The answer for a Stories conversation, else `nil` (the generic emulator answers). `structured`: the request
    /// asked for JSON (scenes, profile and assistant answer JSON; a story is plain text).
    static func answer(conversation: [(role: String, content: String)], structured: Bool) -> String? {
        let system = conversation.filter { $0.role == "system" || $0.role == "developer" }.map(\.content).joined(separator: "\n").lowercased()
        let users = conversation.filter { $0.role == "user" }.map(\.content)
        guard !users.isEmpty else { return nil }
        /// The last user message holding `marker` (the request itself, not a later remark), else the last one.
        func request(_ markers: [String]) -> String {
            users.last { message in markers.contains { message.range(of: $0, options: .caseInsensitive) != nil } } ?? users[users.count - 1]
        }
        if structured {
            if system.contains("key visual moments") || system.contains("scenes") && system.contains("illustration") {
                return scenes(request(["from this story:"]))
            }
            if system.contains("describe children's book characters") { return visualProfile(request(["Appearance:"])) }
            if system.contains("bedtime story event") { return eventAssist(request(["Description:"])) }
            return nil
        }
        let wordings = StoryRequestWording.all
        guard let asked = StoryRequest.read(system: system, user: request(wordings.map(\.heroMarker) + wordings.map(\.traitsLabel))) else {
            return nil
        }
        return story(asked)
    }

    // MARK: - Story

    static func story(_ request: StoryRequest) -> String {
        let (language, hero, traits, event, target) = (request.language, request.hero, request.traits, request.event, request.targetWords)
        let phrases = StoryPhrases.of(language)
        let seed = UInt64(truncatingIfNeeded: stableHash("\(language.rawValue)|\(hero)|\(traits)|\(event)|\(target)"))

        var sentences = [phrases.opening(hero)]
        if let known = SandboxStoryVocabulary.event(event, hero: hero, language: language) {
            sentences.append(phrases.event(hero, title: known.title, seed: known.seed))
        } else {
            sentences.append(phrases.specialDay(hero))
        }
        // Traits in the story's language: the dictionary's wording, or (in English) a one-word trait as given; other
        // traits the dictionary does not know are not pasted into the sentences.
        var named: [String] = []
        var unknown = false
        for trait in traits {
            if let entry = SandboxStoryVocabulary.trait(for: trait), let form = entry.forms[language] {
                if !named.contains(form) { named.append(form) }
            } else if language == .en, !trait.contains(" ") {
                if !named.contains(trait) { named.append(trait) }
            } else {
                unknown = true
            }
        }
        for trait in named { sentences.append(phrases.trait(hero, trait)) }
        if unknown { sentences.append(phrases.otherTraits(hero)) }
        let closing = phrases.closing(hero)
        let closingWords = closing.split(separator: " ").count
        var words = sentences.reduce(0) { $0 + $1.split(separator: " ").count }
        // Every sentence is different (scenes are located by their text): the templates in a seeded order, then
        // again behind one connector, then behind two.
        let order = (0..<phrases.middleTemplates.count).map { ($0, (seed >> UInt64($0 * 3)) & 0xFF) }.sorted { $0.1 < $1.1 }.map(\.0)
        var index = 0
        while words + closingWords < target {
            var sentence = phrases.middle(order[index % order.count], cycle: index / order.count, hero)
            index += 1
            if words + sentence.split(separator: " ").count + closingWords > target + target / 20 {
                // The last words: a short sentence that lands inside the ±5 % window.
                sentence = phrases.short(hero)
                sentences.append(sentence)
                break
            }
            sentences.append(sentence)
            words += sentence.split(separator: " ").count
        }
        sentences.append(closing)
        var paragraphs: [String] = []
        var current: [String] = []
        for sentence in sentences {
            current.append(sentence)
            if current.count == 4 {
                paragraphs.append(current.joined(separator: " "))
                current = []
            }
        }
        if !current.isEmpty { paragraphs.append(current.joined(separator: " ")) }
        return phrases.title(hero) + "\n\n" + paragraphs.joined(separator: "\n\n")
    }

    // MARK: - Scenes

    static func scenes(_ message: String) -> String {
        let fields = PromptFields(message, labels: ["Main character", "Appearance"])
        let hero = fields["Main character"].flatMap { $0.isEmpty ? nil : $0 } ?? "the hero"
        // "Choose exactly N scenes from this story:", then the story.
        let lines = message.components(separatedBy: "\n")
        let marker = lines.firstIndex { $0.range(of: "from this story:", options: .caseInsensitive) != nil }
        let count = min(64, marker.flatMap { PromptFields.firstNumber(in: lines[$0]) } ?? 1)
        // No story after the marker (or no marker): nothing to choose from.
        let story = marker.map { lines.dropFirst($0 + 1).joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let sentences = SandboxText.sentences(in: story)
        let picked = min(count, sentences.count)
        let emotions = ["peaceful", "joyful", "adventurous", "heartwarming", "contemplative", "exciting", "mysterious"]
        var scenes: [RealtimeJSON] = []
        for number in 0..<picked {
            let sentence = sentences[Int((Double(number) + 0.5) * Double(sentences.count) / Double(picked))]
            scenes.append([
                "scene_number": .int(number + 1), "text_segment": .string(sentence),
                "illustration_prompt": .string("Scene \(number + 1): \(hero) in a soft picture-book landscape, \(sentence)"),
                "emotion": .string(emotions[number % emotions.count]),
                "importance": .string(number == 0 || number == picked - 1 ? "key" : (number % 2 == 0 ? "major" : "minor")),
            ])
        }
        let answer: RealtimeJSON = ["scenes": .array(scenes), "reasoning": .string("Evenly spread moments: opening, middle, resolution.")]
        return answer.text
    }

    // MARK: - Visual profile

    static func visualProfile(_ message: String) -> String {
        let fields = PromptFields(message, labels: ["Character", "Description", "Appearance"])
        let appearance = (fields["Appearance"] ?? "") + " " + (fields["Description"] ?? "")
        let words = appearance.lowercased().split(whereSeparator: { !$0.isLetter && $0 != "-" }).map(String.init)
        func before(_ noun: String, count: Int) -> String? {
            guard let index = words.firstIndex(of: noun), index > 0 else { return nil }
            return words[max(0, index - count)..<index].joined(separator: " ")
        }
        func after(_ verbs: [String], count: Int) -> String? {
            guard let index = words.firstIndex(where: verbs.contains), index + 1 < words.count else { return nil }
            return words[(index + 1)..<min(words.count, index + 1 + count)].filter { !["a", "an", "the"].contains($0) }.joined(separator: " ")
        }
        let colours = ["red", "blue", "green", "yellow", "brown", "black", "blonde", "golden", "purple", "pink", "orange", "white", "grey", "gray"]
        let hair = before("hair", count: 2)
        let clothing = after(["wears", "wearing", "in"], count: 3)
        let profile: RealtimeJSON = [
            "hair_color": hair.flatMap { $0.split(separator: " ").last(where: { colours.contains(String($0)) }).map(String.init) }.map(
                RealtimeJSON.string) ?? .null,
            "hair_style": hair.flatMap { $0.split(separator: " ").first(where: { !colours.contains(String($0)) }).map(String.init) }.map(
                RealtimeJSON.string) ?? .null,
            "eye_color": before("eyes", count: 1).map(RealtimeJSON.string) ?? .null,
            "skin_tone": before("skin", count: 1).map(RealtimeJSON.string) ?? .null,
            "clothing_style": clothing.map(RealtimeJSON.string) ?? .null,
            "clothing_colors": clothing.flatMap { $0.split(separator: " ").first(where: { colours.contains(String($0)) }).map(String.init) }.map(
                RealtimeJSON.string) ?? .null,
            "distinctive_features": words.contains("freckles") ? "freckles" : .null,
            "body_type": .null, "age_appearance": .null,
            "color_palette": "warm pastel colours", "art_style": "soft watercolour picture-book illustration",
        ]
        return profile.text
    }

    // MARK: - Event assistant

    static func eventAssist(_ message: String) -> String {
        let fields = PromptFields(message, labels: ["Event title", "Description", "Category", "Age range", "Tone", "Language"])
        let language =
            fields["Language"].flatMap { name in
                StoryLanguage.allCases.first { $0.displayName.caseInsensitiveCompare(name) == .orderedSame } ?? StoryLanguage(code: name)
            } ?? .en
        let description = fields["Description"] ?? ""
        // "(write one)": the model is to write the title.
        let given = fields["Event title"].flatMap { $0.isEmpty || $0.hasPrefix("(") && $0.hasSuffix(")") ? nil : $0 }
        let category = fields["Category"].flatMap { $0.isEmpty ? nil : $0 }
        let words = description.split(whereSeparator: { !$0.isLetter }).map(String.init)
        let title =
            given
            ?? words.prefix(4).enumerated().map { $0.offset == 0 ? $0.element.prefix(1).uppercased() + $0.element.dropFirst() : $0.element }
            .joined(separator: " ")
        let tone = fields["Tone"].flatMap { $0.isEmpty ? nil : $0 } ?? "gentle"
        let ages = fields["Age range"].flatMap { $0.isEmpty ? nil : $0 } ?? "4-10"
        // The tone in the language's own word (agreeing with its word for "story"), or left out there when unknown.
        let local = SandboxStoryVocabulary.tone(tone, language: language).map { " " + $0 } ?? ""
        let seed: String =
            switch language {
            case .en: "A \(tone) bedtime story for ages \(ages) about \(title.lowercased()), full of wonder and warmth."
            case .es: "Un cuento\(local) para niños de \(ages) años sobre \(title.lowercased()), lleno de asombro y cariño."
            case .fr: "Une histoire\(local) pour les \(ages) ans sur \(title.lowercased()), pleine d'émerveillement et de tendresse."
            case .de: "Eine\(local) Gutenachtgeschichte für \(ages)-Jährige über \(title.lowercased()), voller Staunen und Wärme."
            case .it: "Una storia\(local) per bambini di \(ages) anni su \(title.lowercased()), piena di meraviglia e dolcezza."
            }
        var seen = Set<String>()
        let keywords = ([category ?? ""] + words.filter { $0.count >= 5 }).map { $0.lowercased() }
            .filter { !$0.isEmpty && seen.insert($0).inserted }.prefix(8)
        let categoryWord = category ?? "everyday"
        let similar: [String] =
            switch language {
            case .en: ["A first \(categoryWord) adventure", "A \(categoryWord) day with friends", "Trying something new"]
            case .es: ["Una primera aventura", "Un día especial con amigos", "Probar algo nuevo"]
            case .fr: ["Une première aventure", "Une journée spéciale entre amis", "Essayer quelque chose de nouveau"]
            case .de: ["Ein erstes Abenteuer", "Ein besonderer Tag mit Freunden", "Etwas Neues ausprobieren"]
            case .it: ["Una prima avventura", "Una giornata speciale con gli amici", "Provare qualcosa di nuovo"]
            }
        let answer: RealtimeJSON = [
            "title": .string(title.isEmpty ? "A Special Day" : title), "prompt_seed": .string(seed),
            "keywords": .array(keywords.map(RealtimeJSON.string)),
            "similar_events": .array(similar.map(RealtimeJSON.string)),
        ]
        return answer.text
    }

    /// FNV-1a: stable across runs and platforms (`Hasher` is seeded per process).
    static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}

/// The sentence templates of the sandbox storyteller, written natively per language.
struct StoryPhrases {
    /// Templates: `{h}` is the hero's name, `{x}` the event or trait.
    var titleTemplate: String
    var openingTemplate: String
    /// `{t}`: the event's title, `{x}`: its prompt seed as a sentence about the hero.
    var eventTemplate: String
    /// For an event the storyteller cannot tell in this language.
    var specialDayTemplate: String
    /// `{x}`: the trait in the form ``SandboxStoryVocabulary/Trait/forms`` gives for this language.
    var traitTemplate: String
    /// For traits the storyteller cannot name in this language.
    var otherTraitsTemplate: String
    var middleTemplates: [String]
    var shortTemplate: String
    var closingTemplate: String
    /// Words that lead into a sentence ("Then", "After a while", …).
    var connectors: [String]

    private static func fill(_ template: String, _ hero: String, _ extra: String = "") -> String {
        template.replacingOccurrences(of: "{h}", with: hero).replacingOccurrences(of: "{x}", with: extra)
    }

    func title(_ hero: String) -> String { Self.fill(titleTemplate, hero) }
    func opening(_ hero: String) -> String { Self.fill(openingTemplate, hero) }
    func event(_ hero: String, title: String, seed: String) -> String {
        (Self.fill(eventTemplate, hero, seed).replacingOccurrences(of: "{t}", with: title)).trimmingCharacters(in: .whitespaces)
    }
    func specialDay(_ hero: String) -> String { Self.fill(specialDayTemplate, hero) }
    func trait(_ hero: String, _ trait: String) -> String { Self.fill(traitTemplate, hero, trait) }
    func otherTraits(_ hero: String) -> String { Self.fill(otherTraitsTemplate, hero) }
    /// Middle sentence `index`, behind the connectors of `cycle` (0: none; 1…8: one; then two different ones).
    func middle(_ index: Int, cycle: Int, _ hero: String) -> String {
        let template = middleTemplates[index]
        guard cycle > 0 else { return Self.fill(template, hero) }
        let count = connectors.count
        var prefix = connectors[(cycle - 1) % count]
        if cycle > count {
            let second = connectors[((cycle - 1) / count + (cycle - 1) % count) % count]
            prefix += ", " + second.prefix(1).lowercased() + second.dropFirst()
        }
        let body = template.hasPrefix("{h}") ? template : template.prefix(1).lowercased() + template.dropFirst()
        return prefix + ", " + Self.fill(body, hero)
    }
    func short(_ hero: String) -> String { Self.fill(shortTemplate, hero) }
    func closing(_ hero: String) -> String { Self.fill(closingTemplate, hero) }

    static func of(_ language: StoryLanguage) -> StoryPhrases {
        switch language {
        case .en:
            StoryPhrases(
                titleTemplate: "{h} and the Quiet Moon",
                openingTemplate: "Once upon a time, in a cosy little house at the edge of a peaceful meadow, there lived a child called {h}.",
                eventTemplate: "This is the story of a special day for {h}: {t}. {x}",
                specialDayTemplate: "This is the story of a very special day for {h}.",
                traitTemplate: "Everyone who knew {h} said that {h} was {x}, and tonight that would matter very much.",
                otherTraitsTemplate: "{h} had many other good qualities too, and the whole family loved every one of them.",
                middleTemplates: [
                    "{h} walked slowly along the soft garden path, where the flowers were closing their petals for the night.",
                    "A friendly owl hooted softly from the old oak tree, and {h} waved and smiled.",
                    "The stars began to twinkle one by one, like tiny lanterns lighting the way home.",
                    "{h} took a deep, slow breath and felt the cool evening air, calm and gentle.",
                    "Nearby, a little rabbit yawned and curled up in its warm burrow.",
                    "The moon rose over the hills and painted everything in soft silver light.",
                    "{h} remembered a happy song and hummed it quietly, note by note.",
                    "The wind whispered through the tall grass, as soft as a lullaby.",
                ],
                shortTemplate: "{h} smiled.",
                closingTemplate: "And so {h} snuggled under a warm blanket, closed both eyes, and drifted into sweet dreams. The end.",
                connectors: ["Then", "After a while", "Soon", "A little later", "Meanwhile", "Quietly", "Gently", "Once more"]
            )
        case .es:
            StoryPhrases(
                titleTemplate: "{h} y la luna tranquila",
                openingTemplate: "Había una vez, en una casita acogedora al borde de un prado tranquilo, una niña o un niño llamado {h}.",
                eventTemplate: "Esta es la historia de un día especial para {h}: {t}. {x}",
                specialDayTemplate: "Esta es la historia de un día muy especial para {h}.",
                traitTemplate: "Todos los que conocían a {h} hablaban de su {x}, y esa noche eso iba a importar mucho.",
                otherTraitsTemplate: "{h} tenía también otras cualidades, y toda la familia las quería mucho.",
                middleTemplates: [
                    "{h} caminó despacio por el sendero del jardín, donde las flores cerraban sus pétalos para dormir.",
                    "Un búho simpático ululó suavemente desde el viejo roble, y {h} lo saludó con una sonrisa.",
                    "Las estrellas empezaron a brillar una a una, como pequeños farolillos que alumbraban el camino.",
                    "{h} respiró hondo y despacio y sintió el aire fresco de la tarde, tranquilo y suave.",
                    "Cerca de allí, un conejito bostezó y se acurrucó en su madriguera calentita.",
                    "La luna subió por encima de las colinas y lo pintó todo de una luz plateada.",
                    "{h} recordó una canción alegre y la tarareó en voz baja, nota a nota.",
                    "El viento susurraba entre la hierba alta, tan suave como una nana.",
                ],
                shortTemplate: "{h} sonrió.",
                closingTemplate: "Y así {h} se acurrucó bajo una manta calentita, cerró los ojos y se quedó dormido entre dulces sueños. Fin.",
                connectors: [
                    "Luego", "Al cabo de un rato", "Pronto", "Un poco más tarde", "Mientras tanto", "En silencio", "Con dulzura", "Una vez más",
                ]
            )
        case .fr:
            StoryPhrases(
                titleTemplate: "{h} et la lune tranquille",
                openingTemplate: "Il était une fois, dans une petite maison douillette au bord d'une prairie paisible, un enfant qui s'appelait {h}.",
                eventTemplate: "Voici l'histoire d'un jour spécial pour {h} : {t}. {x}",
                specialDayTemplate: "Voici l'histoire d'un jour très spécial pour {h}.",
                traitTemplate: "Tous ceux qui connaissaient {h} parlaient de {x}, et ce soir-là, cela allait beaucoup compter.",
                otherTraitsTemplate: "{h} avait aussi bien d'autres qualités, et toute la famille les aimait beaucoup.",
                middleTemplates: [
                    "{h} marcha doucement le long du chemin du jardin, où les fleurs refermaient leurs pétales pour la nuit.",
                    "Une chouette amicale hulula doucement depuis le vieux chêne, et {h} lui fit un signe en souriant.",
                    "Les étoiles se mirent à scintiller une à une, comme de petites lanternes éclairant le chemin.",
                    "{h} respira lentement et profondément l'air frais du soir, calme et doux.",
                    "Tout près, un petit lapin bâilla et se blottit dans son terrier bien chaud.",
                    "La lune se leva au-dessus des collines et peignit tout d'une douce lumière argentée.",
                    "{h} se souvint d'une chanson joyeuse et la fredonna tout bas, note après note.",
                    "Le vent murmurait dans les hautes herbes, aussi doux qu'une berceuse.",
                ],
                shortTemplate: "{h} sourit.",
                closingTemplate:
                    "Alors {h} se pelotonna sous une couverture bien chaude, ferma les yeux et s'endormit en faisant de beaux rêves. Fin.",
                connectors: [
                    "Puis", "Au bout d'un moment", "Bientôt", "Un peu plus tard", "Pendant ce temps", "Sans bruit", "Tout doucement",
                    "Une fois encore",
                ]
            )
        case .de:
            StoryPhrases(
                titleTemplate: "{h} und der stille Mond",
                openingTemplate: "Es war einmal ein Kind namens {h}, das in einem gemütlichen kleinen Haus am Rand einer friedlichen Wiese wohnte.",
                eventTemplate: "Dies ist die Geschichte eines besonderen Tages für {h}: {t}. {x}",
                specialDayTemplate: "Dies ist die Geschichte eines ganz besonderen Tages für {h}.",
                traitTemplate: "Alle, die {h} kannten, lobten {x} von {h}, und heute Abend sollte das sehr wichtig werden.",
                otherTraitsTemplate: "{h} hatte noch viele andere gute Seiten, und die ganze Familie liebte jede davon.",
                middleTemplates: [
                    "{h} ging langsam den weichen Gartenweg entlang, wo die Blumen ihre Blüten für die Nacht schlossen.",
                    "Eine freundliche Eule rief leise aus der alten Eiche, und {h} winkte lächelnd zurück.",
                    "Die Sterne begannen einer nach dem anderen zu funkeln, wie kleine Laternen auf dem Heimweg.",
                    "{h} atmete tief und langsam die kühle Abendluft ein, ruhig und sanft.",
                    "Ganz in der Nähe gähnte ein kleines Kaninchen und kuschelte sich in seinen warmen Bau.",
                    "Der Mond stieg über die Hügel und malte alles in sanftes Silberlicht.",
                    "{h} erinnerte sich an ein fröhliches Lied und summte es leise, Ton für Ton.",
                    "Der Wind flüsterte durch das hohe Gras, so sanft wie ein Wiegenlied.",
                ],
                shortTemplate: "{h} lächelte.",
                closingTemplate: "Und so kuschelte sich {h} unter eine warme Decke, schloss die Augen und schlief mit süßen Träumen ein. Ende.",
                connectors: ["Dann", "Nach einer Weile", "Bald", "Etwas später", "Währenddessen", "Ganz leise", "Sanft", "Noch einmal"]
            )
        case .it:
            StoryPhrases(
                titleTemplate: "{h} e la luna tranquilla",
                openingTemplate: "C'era una volta, in una casetta accogliente ai margini di un prato tranquillo, un bambino di nome {h}.",
                eventTemplate: "Questa è la storia di un giorno speciale per {h}: {t}. {x}",
                specialDayTemplate: "Questa è la storia di un giorno davvero speciale per {h}.",
                traitTemplate: "Tutti quelli che conoscevano {h} parlavano {x}, e quella sera sarebbe stato molto importante.",
                otherTraitsTemplate: "{h} aveva anche tante altre qualità, e tutta la famiglia le amava molto.",
                middleTemplates: [
                    "{h} camminò piano lungo il sentiero del giardino, dove i fiori chiudevano i petali per la notte.",
                    "Un gufo simpatico cantò piano dalla vecchia quercia, e {h} lo salutò sorridendo.",
                    "Le stelle cominciarono a brillare una dopo l'altra, come piccole lanterne sulla via di casa.",
                    "{h} fece un respiro lento e profondo e sentì l'aria fresca della sera, calma e dolce.",
                    "Lì vicino, un coniglietto sbadigliò e si raggomitolò nella sua tana calda.",
                    "La luna salì sopra le colline e dipinse ogni cosa di una morbida luce d'argento.",
                    "{h} si ricordò una canzone allegra e la canticchiò piano, nota dopo nota.",
                    "Il vento sussurrava tra l'erba alta, dolce come una ninna nanna.",
                ],
                shortTemplate: "{h} sorrise.",
                closingTemplate: "E così {h} si rannicchiò sotto una coperta calda, chiuse gli occhi e si addormentò tra sogni dolcissimi. Fine.",
                connectors: ["Poi", "Dopo un po'", "Presto", "Poco più tardi", "Nel frattempo", "In silenzio", "Dolcemente", "Ancora una volta"]
            )
        }
    }
}
