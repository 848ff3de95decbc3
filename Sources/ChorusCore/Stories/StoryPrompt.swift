import Foundation

/// What a story is about: what the story prompt tells the model.
public struct StoryBrief: Sendable, Equatable {
    public var language: StoryLanguage
    public var heroName: String
    public var heroTraits: [String]
    public var heroAppearance: String
    /// The event's title and prompt seed ("First day of school: Mia discovers that new places hold new friends").
    public var event: String
    public var lengthMinutes: Int

    public init(language: StoryLanguage, heroName: String, heroTraits: [String], heroAppearance: String, event: String, lengthMinutes: Int) {
        self.language = language
        self.heroName = heroName
        self.heroTraits = heroTraits
        self.heroAppearance = heroAppearance
        self.event = event
        self.lengthMinutes = lengthMinutes
    }

    /// About 150 spoken words a minute (the seed's figure).
    public var targetWords: Int { lengthMinutes * StoryPrompt.wordsPerMinute }
}

/// The prompts of the story stage (seed 004 "Story Generation"), written natively in each language: a calm, age-appropriate
/// storyteller for children of 4–10, no scary elements or intense conflict, gentle adventures, friendship and positive
/// messages; the answer is plain text — the title on the first line, a blank line, then the story — so it can be
/// streamed to the app as it is written.
///
/// The prompt holds only what the model needs, in the story's language (issue 21: no machine-readable line for the
/// sandbox; the sandbox's emulator reads this same prose).
public enum StoryPrompt {
    public static let wordsPerMinute = 150

    /// The system message.
    public static func system(_ language: StoryLanguage) -> String {
        switch language {
        case .en:
            """
            You are a skilled children's storyteller who creates engaging, age-appropriate stories for bedtime. Your stories \
            are calming and imaginative and help children feel safe and ready for sleep. Avoid scary elements or intense \
            conflict. Focus on gentle adventures, friendship and positive messages. Write in English.
            """
        case .es:
            """
            Eres un narrador experto de cuentos infantiles que crea historias atractivas y adecuadas para la hora de dormir. \
            Tus cuentos son tranquilos e imaginativos y ayudan a los niños a sentirse seguros y listos para dormir. Evita los \
            elementos que den miedo y los conflictos intensos. Céntrate en aventuras suaves, la amistad y mensajes positivos. \
            Escribe en español.
            """
        case .fr:
            """
            Tu es un conteur expérimenté qui écrit des histoires captivantes et adaptées aux enfants pour l'heure du coucher. \
            Tes histoires sont apaisantes et pleines d'imagination, et aident les enfants à se sentir en sécurité et prêts à \
            dormir. Évite tout élément effrayant et tout conflit intense. Privilégie les aventures douces, l'amitié et les \
            messages positifs. Écris en français.
            """
        case .de:
            """
            Du bist ein erfahrener Geschichtenerzähler, der fesselnde, kindgerechte Gutenachtgeschichten schreibt. Deine \
            Geschichten sind beruhigend und fantasievoll und helfen Kindern, sich geborgen und bereit zum Einschlafen zu \
            fühlen. Vermeide alles Gruselige und heftige Konflikte. Erzähle von sanften Abenteuern, Freundschaft und \
            positiven Botschaften. Schreibe auf Deutsch.
            """
        case .it:
            """
            Sei un abile narratore di storie per bambini che crea racconti coinvolgenti e adatti all'ora della nanna. Le tue \
            storie sono rilassanti e fantasiose e aiutano i bambini a sentirsi al sicuro e pronti a dormire. Evita elementi \
            spaventosi e conflitti intensi. Concentrati su avventure delicate, amicizia e messaggi positivi. Scrivi in italiano.
            """
        }
    }

    /// The user message: the request in the story's language.
    public static func user(_ brief: StoryBrief) -> String {
        let traits = brief.heroTraits.joined(separator: ", ")
        let words = brief.targetWords
        let minutes = brief.lengthMinutes
        let prompt: String =
            switch brief.language {
            case .en:
                """
                Create a \(minutes)-minute bedtime story about \(brief.heroName).

                Character traits: \(traits)
                Appearance: \(brief.heroAppearance)
                Story event: \(brief.event)

                Requirements:
                - calming and sleep-inducing
                - include the character traits
                - centred on the story event
                - for children aged 4 to 10
                - about \(words) words

                Write the title on the first line, then a blank line, then the story in paragraphs separated by blank lines.
                """
            case .es:
                """
                Crea un cuento para dormir de \(minutes) minutos sobre \(brief.heroName).

                Rasgos del personaje: \(traits)
                Aspecto: \(brief.heroAppearance)
                Acontecimiento: \(brief.event)

                Requisitos:
                - tranquilo y que invite al sueño
                - que incluya los rasgos del personaje
                - centrado en el acontecimiento
                - para niños de 4 a 10 años
                - unas \(words) palabras

                Escribe el título en la primera línea, luego una línea en blanco y después el cuento en párrafos separados por líneas en blanco.
                """
            case .fr:
                """
                Écris une histoire du soir de \(minutes) minutes sur \(brief.heroName).

                Traits de caractère : \(traits)
                Apparence : \(brief.heroAppearance)
                Événement : \(brief.event)

                Consignes :
                - apaisante et propice au sommeil
                - qui reprend les traits de caractère
                - centrée sur l'événement
                - pour des enfants de 4 à 10 ans
                - environ \(words) mots

                Écris le titre sur la première ligne, puis une ligne vide, puis l'histoire en paragraphes séparés par des lignes vides.
                """
            case .de:
                """
                Schreibe eine \(minutes)-minütige Gutenachtgeschichte über \(brief.heroName).

                Charaktereigenschaften: \(traits)
                Aussehen: \(brief.heroAppearance)
                Ereignis: \(brief.event)

                Anforderungen:
                - beruhigend und einschläfernd
                - mit den Charaktereigenschaften
                - rund um das Ereignis
                - für Kinder von 4 bis 10 Jahren
                - etwa \(words) Wörter

                Schreibe den Titel in die erste Zeile, dann eine Leerzeile, dann die Geschichte in Absätzen, getrennt durch Leerzeilen.
                """
            case .it:
                """
                Crea una storia della buonanotte di \(minutes) minuti su \(brief.heroName).

                Tratti del personaggio: \(traits)
                Aspetto: \(brief.heroAppearance)
                Evento: \(brief.event)

                Requisiti:
                - rilassante e che concili il sonno
                - che includa i tratti del personaggio
                - incentrata sull'evento
                - per bambini dai 4 ai 10 anni
                - circa \(words) parole

                Scrivi il titolo sulla prima riga, poi una riga vuota, poi la storia in paragrafi separati da righe vuote.
                """
            }
        return prompt
    }

    /// The output budget: about 2 tokens a word in the Latin-script languages, plus room for the title.
    public static func maxOutputTokens(_ brief: StoryBrief) -> Int {
        brief.targetWords * 2 + 200
    }
}

/// A story as the model wrote it: title and text.
public struct StoryText: Sendable, Equatable {
    public var title: String
    public var content: String

    public init(title: String, content: String) {
        self.title = title
        self.content = content
    }

    /// Reads "Title\n\nStory…", tolerating leading blank lines, a `Title:` (or `Titre :`, `Título:`, `Titel:`, `Titolo:`)
    /// label, Markdown `#`/`**` and quotes around the title. Throws ``StoryTextError`` when there is no story after
    /// the title.
    public static func parse(_ raw: String) throws -> StoryText {
        var lines = raw.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n")
        while let first = lines.first, first.trimmingCharacters(in: .whitespaces).isEmpty { lines.removeFirst() }
        guard let first = lines.first else { throw StoryTextError.empty }
        var title = first.trimmingCharacters(in: .whitespaces)
        while title.hasPrefix("#") { title.removeFirst() }
        title = title.trimmingCharacters(in: .whitespaces)
        for label in ["title", "titre", "título", "titulo", "titel", "titolo"] {
            if title.lowercased().hasPrefix(label), let colon = title.firstIndex(of: ":"),
                title.distance(from: title.startIndex, to: colon) <= label.count + 1
            {
                title = String(title[title.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            }
        }
        title = title.trimmingCharacters(in: CharacterSet(charactersIn: "*_\"'“”«»„[] "))
        let content = lines.dropFirst().joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !title.isEmpty, !content.isEmpty else { throw StoryTextError.empty }
        return StoryText(title: title, content: content)
    }

    /// Words in the story (whitespace-separated).
    public var wordCount: Int { content.split(whereSeparator: \.isWhitespace).count }
}

/// Why a generated story is unusable.
public enum StoryTextError: Error, Sendable, Equatable {
    /// No title, or nothing after it.
    case empty
}
