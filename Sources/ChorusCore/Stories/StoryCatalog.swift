import Foundation

/// One of the seed's seven storytelling voices (seed 004 "Voice Selection & Parameters").
public struct StoryVoice: Sendable, Equatable {
    /// The provider's voice id (`coral`, `nova`, …).
    public var id: String
    public var name: String
    public var description: String
    /// How the narrator should speak, sent with every narration request.
    public var instructions: String
}

/// The storytelling voices and their instructions.
public enum StoryVoiceCatalog {
    public static let all: [StoryVoice] = [
        StoryVoice(
            id: "coral", name: "Coral", description: "Warm and nurturing - ideal for bedtime",
            instructions:
                "Speak with a warm, gentle, and nurturing tone perfect for bedtime stories. Use a calm and soothing pace with clear pronunciation. Add subtle emotional expressions to bring characters to life while maintaining a peaceful atmosphere that helps children relax and drift off to sleep."
        ),
        StoryVoice(
            id: "nova", name: "Nova", description: "Friendly and cheerful - captivating for young listeners",
            instructions:
                "Use a friendly, cheerful, and engaging storyteller voice that captivates young listeners. Speak clearly at a moderate pace with gentle enthusiasm. Create distinct character voices while keeping the overall tone calming and suitable for bedtime."
        ),
        StoryVoice(
            id: "fable", name: "Fable", description: "Wise and comforting - like a loving grandparent",
            instructions:
                "Speak like a wise, loving grandparent telling a favourite tale by the fire. Use a slow, comforting pace with warm pauses between moments. Let kindness and gentle humour colour the characters, and soften your voice towards the end so the listener feels safe and sleepy."
        ),
        StoryVoice(
            id: "alloy", name: "Alloy", description: "Clear and pleasant - perfect for educational stories",
            instructions:
                "Use a clear, pleasant and even storytelling voice. Pronounce every word distinctly at a relaxed pace, giving little explanations and discoveries a sense of gentle curiosity. Keep the delivery calm and reassuring, suitable for bedtime."
        ),
        StoryVoice(
            id: "echo", name: "Echo", description: "Soft and dreamy - creates magical atmosphere",
            instructions:
                "Speak softly and dreamily, as if sharing a secret under the stars. Use a slow, flowing pace with airy pauses that create a magical atmosphere. Keep character voices light and whispery, and let the story drift gently towards sleep."
        ),
        StoryVoice(
            id: "onyx", name: "Onyx", description: "Deep and reassuring - protective parent voice",
            instructions:
                "Use a deep, steady and reassuring voice, like a protective parent at the bedside. Speak slowly and calmly with a grounded warmth that makes the listener feel safe. Give characters gentle, friendly voices and never raise the intensity."
        ),
        StoryVoice(
            id: "shimmer", name: "Shimmer", description: "Bright and melodic - sparkles with imagination",
            instructions:
                "Use a bright, melodic voice that sparkles with imagination. Let wonder and delight shine through at a moderate, musical pace, then settle into a softer, slower rhythm as the story winds down for bedtime."
        ),
    ]

    public static func voice(_ id: String) -> StoryVoice? {
        all.first { $0.id == id.lowercased() }
    }

    /// The voice's instructions plus the language to narrate in (seed 004 `getStorytellingInstructions(for:language:)`).
    public static func instructions(for voice: StoryVoice, language: StoryLanguage) -> String {
        voice.instructions + " The story is in \(language.displayName): use natural, native \(language.displayName) pronunciation and intonation."
    }
}

/// A built-in story event: a moment of a child's life a story can be about.
public struct StoryEvent: Sendable, Equatable {
    public var id: String
    public var category: String
    /// Title and prompt seed in each story language.
    public var titles: [StoryLanguage: String]
    public var promptSeeds: [StoryLanguage: String]

    public func title(_ language: StoryLanguage) -> String { titles[language] ?? titles[.en]! }
    public func promptSeed(_ language: StoryLanguage) -> String { promptSeeds[language] ?? promptSeeds[.en]! }
}

/// The built-in events, written natively in the five story languages.
public enum StoryEventCatalog {
    public static func event(_ id: String) -> StoryEvent? { all.first { $0.id == id } }

    public static let all: [StoryEvent] = [
        StoryEvent(
            id: "first_day_of_school", category: "milestones",
            titles: [
                .en: "First day of school", .es: "El primer día de colegio", .fr: "Le premier jour d'école", .de: "Der erste Schultag",
                .it: "Il primo giorno di scuola",
            ],
            promptSeeds: [
                .en: "The hero discovers that a new classroom is full of kind faces and new friends.",
                .es: "El héroe descubre que una clase nueva está llena de caras amables y nuevos amigos.",
                .fr: "Le héros découvre qu'une nouvelle classe est pleine de visages bienveillants et de nouveaux amis.",
                .de: "Der Held entdeckt, dass ein neues Klassenzimmer voller freundlicher Gesichter und neuer Freunde ist.",
                .it: "L'eroe scopre che una nuova classe è piena di volti gentili e di nuovi amici.",
            ]),
        StoryEvent(
            id: "new_sibling", category: "family",
            titles: [
                .en: "A new baby in the family", .es: "Un nuevo bebé en la familia", .fr: "Un nouveau bébé dans la famille",
                .de: "Ein neues Geschwisterchen", .it: "Un nuovo fratellino in famiglia",
            ],
            promptSeeds: [
                .en: "The hero learns that a big heart has room for a tiny new brother or sister.",
                .es: "El héroe aprende que en un corazón grande cabe un hermanito nuevo.",
                .fr: "Le héros apprend qu'un grand cœur a toujours de la place pour un petit frère ou une petite sœur.",
                .de: "Der Held lernt, dass in einem großen Herzen Platz für ein kleines neues Geschwisterchen ist.",
                .it: "L'eroe impara che in un cuore grande c'è posto per un fratellino o una sorellina.",
            ]),
        StoryEvent(
            id: "moving_house", category: "change",
            titles: [
                .en: "Moving to a new home", .es: "La mudanza a una casa nueva", .fr: "Le déménagement", .de: "Der Umzug in ein neues Zuhause",
                .it: "Il trasloco in una nuova casa",
            ],
            promptSeeds: [
                .en: "The hero finds that home is wherever the family's love and favourite things are.",
                .es: "El héroe descubre que el hogar está allí donde están el cariño de la familia y sus cosas favoritas.",
                .fr: "Le héros découvre que la maison, c'est là où se trouvent l'amour de la famille et ses objets préférés.",
                .de: "Der Held merkt, dass Zuhause dort ist, wo die Liebe der Familie und die Lieblingssachen sind.",
                .it: "L'eroe scopre che casa è ovunque ci siano l'affetto della famiglia e le cose preferite.",
            ]),
        StoryEvent(
            id: "visiting_the_dentist", category: "health",
            titles: [
                .en: "Visiting the dentist", .es: "La visita al dentista", .fr: "La visite chez le dentiste", .de: "Der Besuch beim Zahnarzt",
                .it: "La visita dal dentista",
            ],
            promptSeeds: [
                .en: "The hero meets a gentle dentist who counts teeth like shining pearls.",
                .es: "El héroe conoce a una dentista amable que cuenta los dientes como perlas brillantes.",
                .fr: "Le héros rencontre une dentiste très douce qui compte les dents comme des perles brillantes.",
                .de: "Der Held lernt eine sanfte Zahnärztin kennen, die Zähne zählt wie glänzende Perlen.",
                .it: "L'eroe incontra una dentista gentile che conta i denti come perle lucenti.",
            ]),
        StoryEvent(
            id: "losing_a_tooth", category: "milestones",
            titles: [
                .en: "The first wobbly tooth", .es: "El primer diente que se mueve", .fr: "La première dent qui bouge", .de: "Der erste Wackelzahn",
                .it: "Il primo dentino che dondola",
            ],
            promptSeeds: [
                .en: "The hero's first tooth comes out and a tooth fairy prepares a tiny surprise.",
                .es: "Al héroe se le cae el primer diente y el Ratoncito Pérez prepara una pequeña sorpresa.",
                .fr: "La première dent du héros tombe et la petite souris prépare une jolie surprise.",
                .de: "Der erste Zahn des Helden fällt heraus und die Zahnfee bereitet eine kleine Überraschung vor.",
                .it: "Al nostro eroe cade il primo dentino e il Topolino dei denti prepara una piccola sorpresa.",
            ]),
        StoryEvent(
            id: "birthday", category: "celebration",
            titles: [
                .en: "A birthday to remember", .es: "Un cumpleaños inolvidable", .fr: "Un anniversaire inoubliable",
                .de: "Ein unvergesslicher Geburtstag", .it: "Un compleanno indimenticabile",
            ],
            promptSeeds: [
                .en: "The hero's birthday brings a surprise that shows how much everyone cares.",
                .es: "El cumpleaños del héroe trae una sorpresa que muestra cuánto lo quieren todos.",
                .fr: "L'anniversaire du héros apporte une surprise qui montre combien tout le monde l'aime.",
                .de: "Der Geburtstag des Helden bringt eine Überraschung, die zeigt, wie gern ihn alle haben.",
                .it: "Il compleanno dell'eroe porta una sorpresa che mostra quanto tutti gli vogliono bene.",
            ]),
        StoryEvent(
            id: "sleeping_in_own_bed", category: "bedtime",
            titles: [
                .en: "Sleeping in my own bed", .es: "Dormir en mi propia cama", .fr: "Dormir dans mon propre lit", .de: "Im eigenen Bett schlafen",
                .it: "Dormire nel mio lettino",
            ],
            promptSeeds: [
                .en: "The hero's bed becomes a cosy ship that sails through friendly dreams until morning.",
                .es: "La cama del héroe se convierte en un barco acogedor que navega por sueños amables hasta la mañana.",
                .fr: "Le lit du héros devient un bateau douillet qui vogue sur des rêves tout doux jusqu'au matin.",
                .de: "Das Bett des Helden wird zu einem gemütlichen Schiff, das bis zum Morgen durch freundliche Träume segelt.",
                .it: "Il letto dell'eroe diventa una nave accogliente che naviga tra sogni gentili fino al mattino.",
            ]),
        StoryEvent(
            id: "learning_to_swim", category: "skills",
            titles: [.en: "Learning to swim", .es: "Aprender a nadar", .fr: "Apprendre à nager", .de: "Schwimmen lernen", .it: "Imparare a nuotare"],
            promptSeeds: [
                .en: "With patience and a friendly teacher, the hero floats like a happy little otter.",
                .es: "Con paciencia y una maestra amable, el héroe flota como una nutria feliz.",
                .fr: "Avec de la patience et un moniteur gentil, le héros flotte comme une petite loutre heureuse.",
                .de: "Mit Geduld und einer freundlichen Lehrerin schwimmt der Held wie ein fröhlicher kleiner Otter.",
                .it: "Con pazienza e un'insegnante gentile, l'eroe galleggia come una piccola lontra felice.",
            ]),
    ]
}
