/// The persona policy's word tables (see ``PersonaPolicy``), folded: lowercase, no accents (`policía` → `policia`,
/// `Passwort` → `passwort`, `ß` → `ss`). Apostrophes split words (`don't` → `don t`, `l'argent` → `l argent`).
enum PersonaPolicyTables {
    static let negations: Set<String> = [
        // English
        "never", "not", "t", "dont", "without", "nor", "avoid", "refuse",
        // Spanish
        "no", "nunca", "jamas", "sin", "ni",
        // French
        "ne", "n", "jamais", "pas", "sans",
        // German
        "nicht", "nie", "niemals", "kein", "keine", "keinen", "ohne",
        // Italian
        "non", "mai", "senza",
    ]

    static let rules: [PersonaPolicy.Rule] = english + spanish + french + german + italian

    // MARK: English

    static let english: [PersonaPolicy.Rule] = [
        .init(
            .impersonation, "en",
            alone: [
                "impersonat*", "pretend to be the real", "sound exactly like", "imitate the voice*", "imitate their voice", "real person",
                "real celebrity", "deepfake*", "clone the voice", "calling from the police", "calling from the bank", "calling from your bank",
                "president of the united states", "prime minister",
            ],
            requests: [
                "you are", "you re", "youre", "act as", "acting as", "pretend*", "pose as", "posing as", "play a", "play an", "play the",
                "role of", "introduce yourself as", "claim to be", "claiming to be", "say you are", "tell them you are", "calling from", "call from",
                "on behalf of", "work for", "working for", "works for", "represent*",
            ],
            objects: [
                "police", "policeman", "policewoman", "cop", "cops", "officer", "detective", "sheriff", "deputy", "trooper", "constable", "fbi",
                "cia", "dea", "interpol", "law enforcement", "federal agent", "special agent", "911", "emergency services", "emergency room",
                "paramedic*", "ambulance", "fire department", "firefighter*", "coast guard", "hospital", "bank", "banker", "bank employee",
                "bank manager", "fraud department", "fraud team", "credit card company", "irs", "hmrc", "tax office", "tax authority",
                "social security", "government", "immigration", "customs", "border patrol", "embassy", "medicare", "dmv", "ministry",
                "department of", "senator", "governor", "congressman", "congresswoman",
            ]),
        .init(
            .financialRequest, "en",
            requests: [
                "ask*", "request*", "demand*", "collect*", "get them to", "have them", "make them", "convince*", "persuad*", "pressur*",
                "tell them to", "insist*", "pay", "pays", "send*", "transfer*", "wire", "buy", "purchase", "give", "hand over", "obtain",
            ],
            objects: [
                "money", "cash", "payment*", "deposit*", "fee", "fees", "gift card*", "giftcard*", "itunes card*", "google play card*",
                "steam card*", "amazon card*", "prepaid card*", "voucher*", "bitcoin*", "crypto*", "wire transfer", "western union", "moneygram",
                "venmo", "zelle", "paypal", "cash app", "cashapp", "bank transfer", "donation*", "dollars", "euros", "pounds",
            ]),
        .init(
            .credentials, "en",
            requests: [
                "ask*", "request*", "demand*", "collect*", "get them to", "have them", "make them", "convince*", "persuad*", "tell them to",
                "insist*", "read out", "read back", "read you", "give", "hand over", "share", "provide", "confirm*", "verify", "obtain",
                "what is their", "what s their", "spell out",
            ],
            objects: [
                "password*", "passcode*", "pin", "pin code", "pin number", "one time code", "one time password", "verification code*",
                "security code*", "confirmation code*", "2fa", "otp", "sms code", "login details", "login", "credentials", "card number*",
                "credit card*", "debit card*", "card details", "cvv", "cvc", "expiry date", "expiration date", "account number*",
                "routing number*", "sort code", "iban", "social security number", "ssn", "maiden name", "security question*",
            ]),
        .init(
            .threat, "en",
            alone: [
                "threaten*", "threat", "threats", "blackmail*", "extort*", "ransom*", "kidnap*", "hostage*", "intimidat*", "we know where you live",
                "i know where you live", "you will regret", "you ll regret", "hurt you", "hurt them", "hurt him", "hurt her", "kill you",
                "kill them", "kill him", "kill her", "harm you", "harm them", "beat you up", "bomb", "or else",
            ]),
        .init(
            .sexual, "en",
            alone: [
                "sex", "sexual*", "sexy", "sexting", "nude*", "naked", "porn*", "erotic*", "orgasm*", "horny", "dirty talk", "talk dirty",
                "phone sex", "fetish*", "stripper*", "striptease", "nsfw", "seduc*", "aroused", "arousal", "masturbat*", "genital*", "lingerie",
                "one night stand",
            ]),
        .init(
            .minors, "en",
            alone: [
                "child", "children", "childs", "kid", "kids", "kiddo", "minors", "a minor", "is a minor", "underage", "teen", "teens",
                "teenage*", "preteen*", "toddler*", "schoolboy*", "schoolgirl*", "school boy", "school girl", "little boy", "little girl",
                "infant*", "elementary school", "middle school", "high school student", "juvenile*", "adolescen*",
            ]),
    ]

    // MARK: Spanish

    static let spanish: [PersonaPolicy.Rule] = [
        .init(
            .impersonation, "es",
            alone: ["suplant*", "hazte pasar por policia", "imita la voz", "imitar la voz", "persona real", "llamando del banco", "llamas del banco"],
            requests: [
                "eres", "finge*", "finja*", "fingir", "hazte pasar", "hacerte pasar", "hacerse pasar", "haz de", "llamas de", "llamando de",
                "en nombre de", "de parte de", "trabajas para", "representa*", "actua como", "como si fueras", "di que eres", "interpreta*",
            ],
            objects: [
                "policia", "policias", "guardia civil", "detective", "sheriff", "servicios de emergencia", "emergencias", "ambulancia",
                "paramedic*", "bombero*", "hospital", "banco", "bancario", "departamento de fraude", "hacienda", "gobierno", "ministerio",
                "seguridad social", "inmigracion", "aduana*", "embajada", "fbi", "presidente del gobierno", "presidente de la republica",
            ]),
        .init(
            .financialRequest, "es",
            requests: [
                "pide", "pidas", "pidele", "pidales", "pedir", "pedirle", "exige", "exigir", "solicita*", "consigue", "convence*", "que pague*",
                "pague*", "paga", "envie*", "envia*", "enviar", "transfier*", "transferir", "compre", "compra", "dame", "que te de", "que te den",
                "deposit*",
            ],
            objects: [
                "dinero", "efectivo", "pago", "pagos", "tarjeta de regalo", "tarjetas de regalo", "tarjeta regalo", "bitcoin*", "cripto*",
                "transferencia*", "western union", "bizum", "deposito", "cuota", "euros", "dolares",
            ]),
        .init(
            .credentials, "es",
            requests: [
                "pide", "pidas", "pidele", "pidales", "pedir", "pedirle", "exige", "exigir", "solicita*", "consigue", "convence*", "dame",
                "que te de", "que te den", "que diga", "que lea", "confirm*", "verifica*", "comparta", "proporcione",
            ],
            objects: [
                "contrasena*", "clave*", "codigo de verificacion", "codigo de seguridad", "codigo", "pin", "numero de tarjeta",
                "tarjeta de credito", "tarjeta de debito", "cvv", "numero de cuenta", "iban", "datos bancarios", "numero de la seguridad social",
                "dni",
            ]),
        .init(
            .threat, "es",
            alone: [
                "amenaz*", "chantaj*", "extorsion*", "extorsiona*", "secuestr*", "sabemos donde vives", "se donde vives", "te vamos a matar",
                "matarte", "matarlo", "matarla", "hacerte dano",
            ]),
        .init(.sexual, "es", alone: ["sexo", "sexual*", "sexy", "desnud*", "porno*", "erotic*", "hablar sucio", "cachond*", "seduc*"]),
        .init(
            .minors, "es",
            alone: ["nino", "ninos", "nina", "ninas", "menor de edad", "menores", "adolescente*", "crio", "crios", "chiquill*", "colegial*"]),
    ]

    // MARK: French

    static let french: [PersonaPolicy.Rule] = [
        .init(
            .impersonation, "fr",
            alone: ["usurp*", "imite la voix", "imiter la voix", "personne reelle", "appelle de la banque", "appelles de la banque"],
            requests: [
                "tu es", "vous etes", "fais semblant", "faites semblant", "fais toi passer", "faites vous passer", "te faire passer",
                "se faire passer", "de la part de", "au nom de", "travailles pour", "travaille pour", "joue le role", "incarne*", "pretends etre",
                "dis que tu es", "appelles de", "appelle de",
            ],
            objects: [
                "police", "policier*", "gendarme*", "gendarmerie", "commissaire", "inspecteur", "services d urgence", "samu", "pompier*",
                "ambulance", "hopital", "banque", "banquier", "service des fraudes", "conseiller bancaire", "impots", "fisc", "gouvernement",
                "ministere", "prefecture", "douane*", "ambassade", "securite sociale", "president de la republique",
            ]),
        .init(
            .financialRequest, "fr",
            requests: [
                "demande*", "exige*", "reclame*", "obtien*", "obtenir", "convainc*", "fais payer", "paye*", "paie*", "payer", "envoie*", "envoyer",
                "vire*", "transfere*", "achete*", "verse*", "donne*",
            ],
            objects: [
                "argent", "especes", "paiement*", "carte cadeau", "cartes cadeaux", "bitcoin*", "crypto*", "virement*", "western union", "mandat",
                "frais", "euros", "dollars",
            ]),
        .init(
            .credentials, "fr",
            requests: ["demande*", "exige*", "reclame*", "obtien*", "obtenir", "convainc*", "donne*", "lire", "lis", "confirme*", "verifie*"],
            objects: [
                "mot de passe", "mots de passe", "code de verification", "code de confirmation", "code secret", "code pin", "pin",
                "numero de carte", "carte bancaire", "carte de credit", "cryptogramme", "cvv", "numero de compte", "iban", "rib",
                "numero de securite sociale", "identifiants",
            ]),
        .init(
            .threat, "fr",
            alone: [
                "menac*", "chantag*", "extorqu*", "extorsion", "kidnapp*", "rancon", "on sait ou tu habites", "je sais ou tu habites", "te tuer",
                "le tuer", "la tuer",
            ]),
        .init(.sexual, "fr", alone: ["sexe", "sexuel*", "sexy", "toute nue", "tout nu", "porno*", "erotique*", "parler sale", "coquine"]),
        .init(
            .minors, "fr",
            alone: [
                "enfant", "enfants", "gamin*", "mineur", "mineurs", "mineure*", "ado", "ados", "adolescent*", "fillette*", "petit garcon",
                "collegien*", "ecolier*",
            ]),
    ]

    // MARK: German

    static let german: [PersonaPolicy.Rule] = [
        .init(
            .impersonation, "de",
            alone: ["stimme imitieren", "imitiere die stimme", "echte person", "anruf von der bank", "anruf von der polizei"],
            requests: [
                "du bist", "sie sind", "gib dich als", "gibst dich als", "geben sie sich als", "ausgeben", "tu so als", "tun sie so",
                "spiel*", "im namen", "rufst von", "arbeitest fur", "vertritt*",
            ],
            objects: [
                "polizei", "polizist*", "kommissar*", "beamte*", "kripo", "notdienst", "notruf", "rettungsdienst", "sanitater", "feuerwehr",
                "krankenhaus", "bank", "deiner bank", "bankangestellte*", "bankberater*", "sparkasse", "finanzamt", "regierung", "ministerium",
                "behorde*", "zoll", "botschaft", "bundeskanzler*", "bundesprasident*",
            ]),
        .init(
            .financialRequest, "de",
            requests: [
                "verlang*", "fordere*", "forder*", "bitte*", "lass ihn", "lass sie", "bezahl*", "zahl*", "uberweis*", "schick*", "send*",
                "kauf*", "gib mir", "uberred*", "uberzeug*",
            ],
            objects: [
                "geld", "bargeld", "zahlung", "geschenkkarte*", "gutschein*", "bitcoin*", "krypto*", "uberweisung*", "western union", "gebuhr*",
                "euro", "dollar",
            ]),
        .init(
            .credentials, "de",
            requests: [
                "verlang*", "fordere*", "forder*", "bitte*", "lass ihn", "lass sie", "gib mir", "uberred*", "uberzeug*", "vorlesen", "nennen",
                "bestatig*",
            ],
            objects: [
                "passwort*", "kennwort*", "pin", "tan", "bestatigungscode*", "sicherheitscode*", "einmalcode*", "verifizierungscode*",
                "kartennummer*", "kreditkart*", "ec karte", "kontonummer*", "iban", "zugangsdaten", "sozialversicherungsnummer*",
            ]),
        .init(
            .threat, "de",
            alone: ["droh*", "erpress*", "entfuhr*", "losegeld*", "wir wissen wo du wohnst", "ich weiss wo du wohnst", "umbringen", "umzubringen"]),
        .init(.sexual, "de", alone: ["sex", "sexuell*", "sexy", "nackt*", "porno*", "erotisch*", "schmutzige gesprache", "versaut*"]),
        .init(
            .minors, "de",
            alone: ["kind", "kinder", "kindern", "minderjahrig*", "jugendlich*", "teenager*", "schuler", "schulerin*", "kleines madchen", "kleiner junge"]),
    ]

    // MARK: Italian

    static let italian: [PersonaPolicy.Rule] = [
        .init(
            .impersonation, "it",
            alone: ["impersona*", "imita la voce", "imitare la voce", "persona reale", "chiamando dalla banca", "chiami dalla banca"],
            requests: [
                "sei", "fingi*", "spacciati per", "fatti passare per", "chiami da", "chiamando da", "per conto di", "lavori per", "rappresent*",
                "interpreta*",
            ],
            objects: [
                "polizia", "poliziott*", "carabinier*", "guardia di finanza", "detective", "servizi di emergenza", "pronto soccorso",
                "ambulanza", "pompier*", "vigili del fuoco", "ospedale", "banca", "bancario", "ufficio frodi", "agenzia delle entrate", "governo",
                "ministero", "inps", "dogana", "ambasciata", "presidente della repubblica",
            ]),
        .init(
            .financialRequest, "it",
            requests: [
                "chied*", "pretend*", "esig*", "ottien*", "ottenere", "convinc*", "fatti dare", "paga*", "invia*", "manda*", "trasferi*", "bonific*",
                "compra*", "versa*", "dammi",
            ],
            objects: [
                "soldi", "denaro", "contanti", "pagamento", "carta regalo", "buono regalo", "buoni regalo", "bitcoin*", "cripto*", "bonifico",
                "western union", "ricarica", "postepay", "euro", "dollari",
            ]),
        .init(
            .credentials, "it",
            requests: ["chied*", "pretend*", "esig*", "ottien*", "ottenere", "convinc*", "fatti dare", "dammi", "leggere", "legga", "conferm*"],
            objects: [
                "password", "codice di verifica", "codice di sicurezza", "codice otp", "pin", "numero della carta", "carta di credito",
                "carta di debito", "cvv", "numero di conto", "iban", "codice fiscale", "credenziali",
            ]),
        .init(
            .threat, "it",
            alone: [
                "minacc*", "ricatt*", "estors*", "rapisci", "rapito", "rapita", "rapimento", "riscatto", "sappiamo dove abiti", "so dove abiti",
                "ammazz*", "uccid*",
            ]),
        .init(.sexual, "it", alone: ["sesso", "sessual*", "sexy", "nud*", "porno*", "erotic*", "parlare sporco", "eccitat*"]),
        .init(
            .minors, "it",
            alone: ["bambino", "bambini", "bambina", "bambine", "minorenne*", "minori", "ragazzin*", "adolescent*", "scolaro", "scolara"]),
    ]
}
