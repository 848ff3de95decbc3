import Foundation

/// The sandbox's picture-book painter: a prompt's words decide what is drawn, a hash of the prompt where.
///
/// Words are matched in the five story languages (English, Spanish, French, German, Italian):
/// - night words (night, moon, stars, bedtime, dream, sleep…) give a dark sky with a crescent moon and stars; sunset
///   words an orange sky with a setting sun; otherwise a blue day sky with a sun; portrait words (portrait, avatar,
///   plain background) a plain light background with a large figure;
/// - objects: a figure (child, girl, boy, hero, character… and the default when nothing else is named), a house, trees
///   (one, or a row for a forest), hills, water with a boat, flowers, an animal (fox, bear, cat, dog, rabbit, owl…);
/// - colours: a colour next to `hair` colours the figure's hair; the first other colour named colours the main subject
///   (the figure's clothes, else the house, the boat or the animal), later ones the flowers and the roof. Figures and
///   animals keep their colours at night; the landscape is dimmed.
///
/// The same prompt and variant always give the same picture.
struct SandboxPicture {
    typealias RGB = (r: UInt8, g: UInt8, b: UInt8)

    let width: Int
    let height: Int
    /// Row-major RGB bytes.
    private(set) var pixels: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 255, count: width * height * 3)
    }

    /// The pixel at (`x`, `y`).
    func pixel(x: Int, y: Int) -> RGB {
        let index = (y * width + x) * 3
        return (pixels[index], pixels[index + 1], pixels[index + 2])
    }

    /// This picture enlarged `factor` times, each pixel a `factor`×`factor` block, cut to `width`×`height` (the
    /// coarser detail of a lower image quality).
    func enlarged(_ factor: Int, width: Int, height: Int) -> SandboxPicture {
        guard factor > 1, self.width > 0, self.height > 0 else { return self }
        var large = SandboxPicture(width: width, height: height)
        for y in 0..<height {
            let source = min(self.height - 1, y / factor) * self.width
            for x in 0..<width {
                let from = (source + min(self.width - 1, x / factor)) * 3
                let to = (y * width + x) * 3
                large.pixels[to] = pixels[from]
                large.pixels[to + 1] = pixels[from + 1]
                large.pixels[to + 2] = pixels[from + 2]
            }
        }
        return large
    }

    // MARK: - Drawing primitives (clipped to the picture)

    /// Rows `top..<bottom` in a vertical gradient from `from` to `to`.
    mutating func gradient(top: Int, bottom: Int, from: RGB, to: RGB) {
        let top = max(0, top)
        let bottom = min(height, bottom)
        guard bottom > top else { return }
        let span = max(1, bottom - top - 1)
        let width = width
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in top..<bottom {
                let t = y - top
                func mix(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8((Int(a) * (span - t) + Int(b) * t) / span) }
                let (r, g, b) = (mix(from.r, to.r), mix(from.g, to.g), mix(from.b, to.b))
                var index = y * width * 3
                for _ in 0..<width {
                    buffer[index] = r
                    buffer[index + 1] = g
                    buffer[index + 2] = b
                    index += 3
                }
            }
        }
    }

    /// Fills the pixels of the box `x0..<x1`, `y0..<y1` for which `inside(x, y)` holds.
    private mutating func fill(x0: Int, y0: Int, x1: Int, y1: Int, _ colour: RGB, inside: (Int, Int) -> Bool) {
        let (left, right) = (max(0, x0), min(width, x1))
        let (top, bottom) = (max(0, y0), min(height, y1))
        guard right > left, bottom > top else { return }
        let width = width
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in top..<bottom {
                for x in left..<right where inside(x, y) {
                    let index = (y * width + x) * 3
                    buffer[index] = colour.r
                    buffer[index + 1] = colour.g
                    buffer[index + 2] = colour.b
                }
            }
        }
    }

    mutating func rectangle(x: Int, y: Int, width w: Int, height h: Int, _ colour: RGB) {
        fill(x0: x, y0: y, x1: x + w, y1: y + h, colour) { _, _ in true }
    }

    mutating func ellipse(cx: Int, cy: Int, rx: Int, ry: Int, _ colour: RGB) {
        let (rx, ry) = (max(1, rx), max(1, ry))
        let (rx2, ry2) = (Double(rx * rx), Double(ry * ry))
        fill(x0: cx - rx, y0: cy - ry, x1: cx + rx + 1, y1: cy + ry + 1, colour) { x, y in
            let (dx, dy) = (Double(x - cx), Double(y - cy))
            return dx * dx / rx2 + dy * dy / ry2 <= 1
        }
    }

    mutating func circle(cx: Int, cy: Int, r: Int, _ colour: RGB) { ellipse(cx: cx, cy: cy, rx: r, ry: r, colour) }

    /// A triangle with corners `a`, `b`, `c`.
    mutating func triangle(_ a: (Int, Int), _ b: (Int, Int), _ c: (Int, Int), _ colour: RGB) {
        func edge(_ p: (Int, Int), _ q: (Int, Int), _ x: Int, _ y: Int) -> Int { (q.0 - p.0) * (y - p.1) - (q.1 - p.1) * (x - p.0) }
        let area = edge(a, b, c.0, c.1)
        guard area != 0 else { return }
        fill(
            x0: min(a.0, b.0, c.0), y0: min(a.1, b.1, c.1), x1: max(a.0, b.0, c.0) + 1, y1: max(a.1, b.1, c.1) + 1, colour
        ) { x, y in
            let (w0, w1, w2) = (edge(b, c, x, y), edge(c, a, x, y), edge(a, b, x, y))
            return area > 0 ? (w0 >= 0 && w1 >= 0 && w2 >= 0) : (w0 <= 0 && w1 <= 0 && w2 <= 0)
        }
    }
}

/// What a prompt asks to be drawn.
struct SandboxPictureScene: Equatable {
    enum Light: Equatable { case day, sunset, night, plain }

    var light: Light = .day
    var figure = false
    var house = false
    var trees = 0
    var hills = false
    var water = false
    var boat = false
    var flowers = false
    var animal: SandboxPicture.RGB?
    /// Named colours for the subject, in order of appearance.
    var colours: [SandboxPicture.RGB] = []
    var hair: SandboxPicture.RGB?

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.light == rhs.light && lhs.figure == rhs.figure && lhs.house == rhs.house && lhs.trees == rhs.trees && lhs.hills == rhs.hills
            && lhs.water == rhs.water && lhs.boat == rhs.boat && lhs.flowers == rhs.flowers && lhs.colours.map(key) == rhs.colours.map(key)
            && lhs.hair.map(key) == rhs.hair.map(key) && lhs.animal.map(key) == rhs.animal.map(key)
    }

    private static func key(_ colour: SandboxPicture.RGB) -> [UInt8] { [colour.r, colour.g, colour.b] }

    /// Colour words (exact, lowercased) in the five story languages.
    static let colourWords: [(words: Set<String>, colour: SandboxPicture.RGB)] = [
        (["red", "rojo", "roja", "rojos", "rojas", "rouge", "rouges", "rot", "rote", "roten", "roter", "rotes", "rosso", "rossa", "rossi", "rosse"], (215, 38, 45)),
        (["orange", "naranja", "arancione", "arancio"], (245, 135, 25)),
        (["yellow", "amarillo", "amarilla", "jaune", "jaunes", "gelb", "gelbe", "gelben", "gelber", "giallo", "gialla"], (250, 210, 30)),
        (["green", "verde", "verdes", "vert", "verte", "verts", "grün", "grüne", "grünen", "gruen", "verdi"], (40, 150, 60)),
        (["blue", "azul", "azules", "bleu", "bleue", "bleus", "blau", "blaue", "blauen", "blauer", "blu"], (30, 70, 215)),
        (["purple", "violet", "violette", "morado", "morada", "lila", "viola", "viola"], (135, 55, 180)),
        (["pink", "rosa", "rose", "rosado", "rosada"], (240, 115, 170)),
        (["brown", "marrón", "marron", "braun", "braune", "braunen", "castaño", "castaña", "marrone", "brune", "brun"], (125, 78, 40)),
        (["black", "negro", "negra", "noir", "noire", "schwarz", "schwarze", "nero", "nera"], (28, 28, 32)),
        (["white", "blanco", "blanca", "blanc", "blanche", "weiß", "weiss", "weiße", "bianco", "bianca"], (245, 245, 240)),
        (["grey", "gray", "gris", "grise", "grau", "graue", "grigio", "grigia"], (135, 135, 140)),
        (["gold", "golden", "dorado", "dorada", "doré", "dorée", "goldene", "goldenen", "dorato", "dorata"], (225, 175, 35)),
        (["blonde", "blond", "rubio", "rubia", "biondo", "bionda"], (240, 205, 110)),
        (["silver", "plateado", "argenté", "silbern", "argento"], (195, 200, 210)),
        (["turquoise", "teal", "turquesa", "türkis", "turchese"], (30, 170, 170)),
    ]

    private static let hairWords: Set<String> = ["hair", "pelo", "cabello", "cheveux", "haare", "haar", "capelli"]
    /// Colours near these words describe something too small to draw (eyes, skin).
    private static let skipWords: Set<String> = ["eyes", "eye", "ojos", "yeux", "augen", "occhi", "skin", "piel", "peau", "haut", "pelle"]

    /// Word stems (a word starting with one matches).
    private static let nightStems = [
        "night", "moon", "star", "bedtime", "dream", "sleep", "evening", "noche", "luna", "estrella", "sueño", "dormir", "nuit", "lune",
        "étoile", "rêve", "soir", "nacht", "mond", "stern", "traum", "schlaf", "abend", "notte", "stell", "sogn", "sera", "nanna",
    ]
    private static let sunsetStems = ["sunset", "dusk", "twilight", "atardecer", "crépuscule", "coucher", "sonnenuntergang", "tramonto"]
    private static let portraitStems = ["portrait", "avatar", "retrato", "porträt", "ritratto", "plain light background"]
    private static let figureStems = [
        "child", "girl", "boy", "kid", "hero", "character", "person", "baby", "niño", "niña", "héroe", "personaje", "enfant", "fille", "garçon",
        "héros", "personnage", "kind", "mädchen", "junge", "held", "figur", "bambin", "ragazz", "eroe", "personaggio",
    ]
    private static let houseStems = ["house", "home", "school", "casa", "escuela", "colegio", "maison", "école", "haus", "schule", "scuola"]
    private static let forestStems = ["forest", "woods", "bosque", "forêt", "wald", "bosco", "foresta"]
    private static let treeStems = ["tree", "garden", "park", "meadow", "árbol", "jardín", "parque", "arbre", "jardin", "baum", "garten", "albero", "giardino", "prato"]
    private static let hillStems = ["hill", "mountain", "colina", "montaña", "colline", "montagne", "hügel", "berg", "collin", "montagn"]
    private static let waterStems = [
        "sea", "ocean", "lake", "river", "beach", "swim", "water", "mar", "playa", "nadar", "agua", "lago", "río", "mer", "plage", "nager",
        "eau", "lac", "meer", "strand", "schwimm", "wasser", "fluss", "spiaggia", "nuot", "acqua", "fiume",
    ]
    private static let boatStems = ["boat", "ship", "sail", "barco", "barca", "bateau", "navire", "boot", "schiff", "nave", "vela"]
    private static let flowerStems = ["flower", "butterfl", "flor", "mariposa", "fleur", "papillon", "blume", "schmetterling", "fiore", "farfall"]
    private static let animals: [(stems: [String], colour: SandboxPicture.RGB)] = [
        (["fox", "zorro", "renard", "fuchs", "volpe"], (230, 110, 30)),
        (["bear", "oso", "ours", "bär", "orso"], (110, 70, 40)),
        (["cat", "kitten", "gato", "chat", "katze", "gatt"], (150, 150, 155)),
        (["dog", "puppy", "perro", "chien", "hund", "cane"], (165, 115, 70)),
        (["rabbit", "bunny", "conejo", "lapin", "kaninchen", "hase", "conigli"], (235, 230, 225)),
        (["owl", "búho", "chouette", "hibou", "eule", "gufo"], (140, 100, 60)),
        (["otter", "nutria", "loutre", "lontra"], (120, 85, 55)),
    ]

    /// The scene a prompt describes.
    init(prompt: String) {
        let lowered = prompt.lowercased()
        let words = lowered.split(whereSeparator: { !$0.isLetter }).map(String.init)
        // Stems of four letters or more match as prefixes ("star" → "stars"); shorter ones as words or plurals.
        func matches(_ word: String, _ stem: String) -> Bool {
            stem.count >= 4 ? word.hasPrefix(stem) : (word == stem || word == stem + "s")
        }
        func has(_ stems: [String]) -> Bool {
            stems.contains { stem in stem.contains(" ") ? lowered.contains(stem) : words.contains { matches($0, stem) } }
        }
        if has(Self.portraitStems) {
            light = .plain
        } else if has(Self.sunsetStems) {
            light = .sunset
        } else if has(Self.nightStems) {
            light = .night
        }
        house = has(Self.houseStems)
        trees = has(Self.forestStems) ? 5 : has(Self.treeStems) ? 1 : 0
        hills = has(Self.hillStems)
        water = has(Self.waterStems)
        boat = has(Self.boatStems)
        if boat { water = true }
        flowers = has(Self.flowerStems)
        animal = Self.animals.first { has($0.stems) }?.colour
        figure = has(Self.figureStems) || light == .plain || !(house || trees > 0 || boat || animal != nil || water)
        for (index, word) in words.enumerated() {
            guard let colour = Self.colourWords.first(where: { $0.words.contains(word) })?.colour else { continue }
            let near = words[max(0, index - 2)..<min(words.count, index + 4)]
            if near.contains(where: Self.hairWords.contains) {
                if hair == nil { hair = colour }
            } else if !near.contains(where: Self.skipWords.contains) {
                colours.append(colour)
            }
        }
    }
}

extension SandboxPicture {
    /// A deterministic pseudo-random sequence (SplitMix64).
    struct Dice {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// A value in `0..<bound` (`bound` ≥ 1).
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }
        /// A value in `range`, in thousandths.
        mutating func fraction(_ range: ClosedRange<Int>) -> Double { Double(range.lowerBound + below(range.count)) / 1_000 }
    }

    /// The picture for `prompt` (variant `variant` of `n`) at `width`×`height`.
    static func paint(prompt: String, variant: Int, width: Int, height: Int) -> SandboxPicture {
        let scene = SandboxPictureScene(prompt: prompt)
        var dice = Dice(state: SandboxStories.stableHash("\(variant)|\(prompt)"))
        var picture = SandboxPicture(width: width, height: height)
        let s = Double(min(width, height))
        func px(_ fraction: Double) -> Int { Int((fraction * s).rounded()) }
        func x(_ fraction: Double) -> Int { Int((fraction * Double(width)).rounded()) }
        func y(_ fraction: Double) -> Int { Int((fraction * Double(height)).rounded()) }
        func shade(_ colour: RGB, _ factor: Double) -> RGB {
            func scale(_ value: UInt8) -> UInt8 { UInt8(max(0, min(255, (Double(value) * factor).rounded()))) }
            return (scale(colour.r), scale(colour.g), scale(colour.b))
        }
        let night = scene.light == .night
        let dim = night ? 0.45 : 1.0
        let palette: [RGB] = [(215, 38, 45), (245, 135, 25), (40, 150, 60), (135, 55, 180), (240, 115, 170), (30, 170, 170)]
        let subject = scene.colours.first ?? palette[dice.below(palette.count)]
        let second = scene.colours.dropFirst().first ?? palette[dice.below(palette.count)]

        // Sky and ground.
        let horizon = scene.light == .plain ? height : y(dice.fraction(600...680))
        switch scene.light {
        case .day: picture.gradient(top: 0, bottom: horizon, from: (85, 155, 225), to: (190, 225, 250))
        case .sunset: picture.gradient(top: 0, bottom: horizon, from: (120, 80, 150), to: (250, 170, 90))
        case .night: picture.gradient(top: 0, bottom: horizon, from: (8, 12, 45), to: (40, 50, 110))
        case .plain: picture.gradient(top: 0, bottom: height, from: (245, 238, 225), to: (225, 215, 200))
        }
        if scene.light != .plain {
            switch scene.light {
            case .night:
                for _ in 0..<(40 + dice.below(30)) {
                    let size = max(1, px(0.004) + dice.below(max(1, px(0.004))))
                    picture.rectangle(x: dice.below(width), y: dice.below(max(1, horizon * 3 / 4)), width: size, height: size, (250, 245, 200))
                }
                let (mx, my, mr) = (x(dice.fraction(150...850)), y(dice.fraction(100...220)), px(0.075))
                picture.circle(cx: mx, cy: my, r: mr, (245, 240, 205))
                picture.circle(cx: mx + mr * 2 / 5, cy: my - mr / 5, r: mr * 4 / 5, picture.pixel(x: min(width - 1, max(0, mx + mr)), y: min(height - 1, max(0, my + mr))))
            case .sunset:
                picture.circle(cx: x(dice.fraction(250...750)), cy: horizon, r: px(0.12), (250, 110, 40))
            default:
                let (sx, sy, sr) = (x(dice.below(2) == 0 ? 0.15 : 0.85), y(dice.fraction(100...180)), px(0.08))
                picture.circle(cx: sx, cy: sy, r: sr, (255, 215, 70))
                picture.circle(cx: x(dice.fraction(300...700)), cy: y(0.12), r: px(0.045), (250, 250, 250))
                picture.circle(cx: x(dice.fraction(300...700)) + px(0.05), cy: y(0.12) + px(0.01), r: px(0.055), (250, 250, 250))
            }
            if scene.hills {
                picture.ellipse(cx: x(0.25), cy: horizon, rx: x(0.35), ry: px(0.18), shade((70, 140, 80), dim))
                picture.ellipse(cx: x(0.8), cy: horizon, rx: x(0.3), ry: px(0.13), shade((90, 155, 90), dim))
            }
            picture.gradient(top: horizon, bottom: height, from: shade((95, 175, 80), dim), to: shade((60, 130, 55), dim))
            if scene.water {
                let shore = horizon + (height - horizon) / 3
                picture.gradient(top: horizon, bottom: shore + (height - shore) / 2, from: shade((60, 130, 210), dim), to: shade((35, 90, 180), dim))
            }
        }

        // Things, back to front.
        let ground = scene.light == .plain ? height : horizon
        if scene.house {
            let (hx, hw, hh) = (x(dice.fraction(80...200)), px(0.3), px(0.22))
            let wall = scene.figure || scene.colours.isEmpty ? shade((235, 205, 160), dim) : shade(subject, dim)
            picture.rectangle(x: hx, y: ground - hh, width: hw, height: hh, wall)
            picture.triangle((hx - px(0.03), ground - hh), (hx + hw + px(0.03), ground - hh), (hx + hw / 2, ground - hh - px(0.14)), shade(scene.figure ? second : (170, 60, 50), dim))
            picture.rectangle(x: hx + hw * 2 / 5, y: ground - hh * 11 / 20, width: hw / 5, height: hh * 11 / 20, shade((110, 70, 40), dim))
            picture.rectangle(x: hx + hw / 10, y: ground - hh * 3 / 4, width: hw / 5, height: hh / 4, night ? (250, 220, 110) : (180, 215, 240))
            picture.rectangle(x: hx + hw * 7 / 10, y: ground - hh * 3 / 4, width: hw / 5, height: hh / 4, night ? (250, 220, 110) : (180, 215, 240))
        }
        for index in 0..<scene.trees {
            let tx = scene.trees == 1 ? x(dice.fraction(680...880)) : x(0.1 + 0.2 * Double(index) + dice.fraction(0...40))
            let (tw, th) = (px(0.035), px(0.16))
            picture.rectangle(x: tx - tw / 2, y: ground - th, width: tw, height: th, shade((110, 72, 40), dim))
            picture.circle(cx: tx, cy: ground - th - px(0.04), r: px(0.09), shade((45, 130, 55), dim))
        }
        if scene.boat {
            let (bx, by, bw) = (x(dice.fraction(250...650)), ground + (height - ground) / 4, px(0.26))
            let hull = scene.figure || scene.house || scene.colours.isEmpty ? shade((150, 90, 50), dim) : shade(subject, dim)
            picture.triangle((bx, by), (bx + bw, by), (bx + bw * 4 / 5, by + px(0.07)), hull)
            picture.triangle((bx, by), (bx + bw / 5, by + px(0.07)), (bx + bw * 4 / 5, by + px(0.07)), hull)
            picture.rectangle(x: bx + bw / 2 - px(0.006), y: by - px(0.2), width: px(0.012), height: px(0.2), shade((90, 60, 40), dim))
            picture.triangle((bx + bw / 2 + px(0.01), by - px(0.2)), (bx + bw / 2 + px(0.01), by - px(0.02)), (bx + bw * 9 / 10, by - px(0.02)), shade((250, 250, 245), dim))
        }
        if scene.flowers {
            let colours = scene.colours.count > 1 ? Array(scene.colours.dropFirst()) : [(240, 115, 170), (250, 210, 30), (255, 255, 255)]
            for index in 0..<12 {
                let fx = dice.below(width)
                let fy = ground + px(0.02) + dice.below(max(1, height - ground - px(0.04)))
                picture.circle(cx: fx, cy: fy, r: px(0.018), shade(colours[index % colours.count], dim))
                picture.circle(cx: fx, cy: fy, r: px(0.007), shade((250, 200, 40), dim))
            }
        }
        if let animal = scene.animal {
            let colour = scene.figure || scene.house || scene.boat || scene.colours.isEmpty ? animal : subject
            let (ax, ay) = (x(scene.figure ? 0.7 : 0.5), scene.boat ? ground + (height - ground) / 4 - px(0.09) : ground + px(0.1))
            let (bodyW, bodyH) = (px(0.11), px(0.07))
            picture.ellipse(cx: ax, cy: ay, rx: bodyW, ry: bodyH, colour)
            picture.circle(cx: ax + bodyW, cy: ay - bodyH, r: px(0.055), colour)
            picture.triangle((ax + bodyW - px(0.05), ay - bodyH - px(0.03)), (ax + bodyW - px(0.015), ay - bodyH - px(0.04)), (ax + bodyW - px(0.04), ay - bodyH - px(0.1)), colour)
            picture.triangle((ax + bodyW + px(0.015), ay - bodyH - px(0.04)), (ax + bodyW + px(0.05), ay - bodyH - px(0.03)), (ax + bodyW + px(0.04), ay - bodyH - px(0.1)), colour)
            picture.circle(cx: ax + bodyW + px(0.02), cy: ay - bodyH - px(0.01), r: max(1, px(0.008)), (20, 20, 20))
        }
        if scene.figure {
            let large = scene.light == .plain
            let unit = large ? 2.2 : 1.0
            let fx = large ? x(0.5) : x(dice.fraction(400...600))
            let feet = large ? height + px(0.02) : min(height - px(0.02), ground + px(0.12))
            func u(_ value: Double) -> Int { px(value * unit) }
            let body = subject
            // Legs, dress/coat, arms, head, hair.
            picture.rectangle(x: fx - u(0.035), y: feet - u(0.09), width: u(0.025), height: u(0.09), (60, 60, 70))
            picture.rectangle(x: fx + u(0.01), y: feet - u(0.09), width: u(0.025), height: u(0.09), (60, 60, 70))
            picture.triangle((fx, feet - u(0.27)), (fx - u(0.085), feet - u(0.08)), (fx + u(0.085), feet - u(0.08)), body)
            picture.rectangle(x: fx - u(0.045), y: feet - u(0.25), width: u(0.09), height: u(0.09), body)
            picture.rectangle(x: fx - u(0.085), y: feet - u(0.24), width: u(0.04), height: u(0.025), body)
            picture.rectangle(x: fx + u(0.045), y: feet - u(0.24), width: u(0.04), height: u(0.025), body)
            let hair = scene.hair ?? (95, 60, 35)
            picture.circle(cx: fx, cy: feet - u(0.315), r: u(0.058), hair)
            picture.circle(cx: fx, cy: feet - u(0.3), r: u(0.05), (245, 205, 175))
            picture.ellipse(cx: fx, cy: feet - u(0.345), rx: u(0.055), ry: u(0.022), hair)
            picture.circle(cx: fx - u(0.018), cy: feet - u(0.305), r: max(1, u(0.006)), (40, 30, 30))
            picture.circle(cx: fx + u(0.018), cy: feet - u(0.305), r: max(1, u(0.006)), (40, 30, 30))
        }
        return picture
    }
}
