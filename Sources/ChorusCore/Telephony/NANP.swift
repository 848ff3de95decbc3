/// The North American Numbering Plan (+1): 3-digit area code (NPA), 3-digit exchange (NXX), 4-digit line.
///
/// Rules from NANPA's published numbering resources (sources and date in `docs/decisions.md`): an NPA or NXX never
/// starts with 0 or 1; N11 codes (211–911) are service codes, never area codes or exchanges; NPA 900 and exchange 976
/// are premium-rate information services; NPA 710 is the US government's; 555 is not a subscriber exchange (555-0100–0199
/// is reserved for fiction, 555-1212 and 555-4334 are directory assistance). Area codes map to their country and time
/// zones; an area code the table does not know is taken as the United States, in all of its zones.
enum NANP {
    static func classify(_ national: String) -> NumberingPlan.Classification {
        let digits = Array(national.utf8).map { Int($0) - 0x30 }
        guard digits.count == 10 else {
            return .refused(NumberRefusal(.invalid, "numbers of the North American Numbering Plan have 10 digits after +1"))
        }
        let npa = String(national.prefix(3))
        let nxx = String(national.dropFirst(3).prefix(3))
        let line = String(national.suffix(4))
        if digits[0] <= 1 { return .refused(NumberRefusal(.invalid, "North American area codes never start with 0 or 1")) }
        if digits[1] == 1 && digits[2] == 1 {
            return .refused(NumberRefusal(.invalid, "N11 codes such as \(npa) are service codes, not area codes"))
        }
        if npa == "900" {
            return .refused(NumberRefusal(.premiumRate, "900 numbers are premium-rate in the North American Numbering Plan"))
        }
        if npa == "710" { return .refused(NumberRefusal(.service, "area code 710 is reserved for the US government")) }
        if digits[3] <= 1 { return .refused(NumberRefusal(.invalid, "North American exchanges never start with 0 or 1")) }
        if digits[4] == 1 && digits[5] == 1 {
            return .refused(NumberRefusal(.service, "\(nxx) is an N11 service code, not an exchange"))
        }
        if nxx == "976" {
            return .refused(NumberRefusal(.premiumRate, "976 exchanges are premium-rate information lines"))
        }
        if nxx == "555" {
            if line == "1212" || line == "4334" {
                return .refused(NumberRefusal(.service, "555-\(line) is directory assistance"))
            }
            if !nonGeographicUS.contains(npa) {
                let why =
                    line.hasPrefix("01")
                    ? "555-0100 to 555-0199 is the fictional range of the North American Numbering Plan"
                    : "555 is not a subscriber exchange in the North American Numbering Plan"
                let country = countryByAreaCode[npa] ?? "US"
                return .callable(
                    PhoneDestination(country: country, timeZones: zones(npa: npa, country: country), fictionalReason: why))
            }
        }
        if let country = countryByAreaCode[npa] {
            return .callable(PhoneDestination(country: country, timeZones: zones(npa: npa, country: country)))
        }
        return .callable(PhoneDestination(country: "US", timeZones: zones(npa: npa, country: "US")))
    }

    /// Non-geographic US codes (personal communications, toll-free, carrier services): country-wide.
    static let nonGeographicUS: Set<String> = [
        "500", "521", "522", "523", "524", "525", "526", "527", "528", "529", "532", "533", "535", "538", "542", "543", "544", "545",
        "546", "547", "549", "550", "552", "553", "554", "556", "558", "566", "569", "577", "578", "588", "589", "700", "800", "833",
        "844", "855", "866", "877", "888",
    ]

    /// An area code's zones: its own when the table narrows it, else its country's, else the whole US span (every
    /// country of the table has zones — a test checks it — so the last fallback only keeps a table slip from trapping).
    static func zones(npa: String, country: String) -> [String] {
        zonesByAreaCode[npa] ?? countries[country] ?? countries["US"] ?? ["America/New_York"]
    }

    /// The zones of each NANP country; the country's zone span when the area code does not narrow it.
    static let countries: [String: [String]] = [
        "US": [
            "America/New_York", "America/Chicago", "America/Denver", "America/Phoenix", "America/Los_Angeles", "America/Anchorage",
            "Pacific/Honolulu",
        ],
        "CA": [
            "America/St_Johns", "America/Halifax", "America/Toronto", "America/Winnipeg", "America/Regina", "America/Edmonton",
            "America/Vancouver",
        ],
        "PR": ["America/Puerto_Rico"], "VI": ["America/St_Thomas"], "GU": ["Pacific/Guam"], "MP": ["Pacific/Saipan"],
        "AS": ["Pacific/Pago_Pago"], "AG": ["America/Antigua"], "AI": ["America/Anguilla"], "BS": ["America/Nassau"],
        "BB": ["America/Barbados"], "BM": ["Atlantic/Bermuda"], "VG": ["America/Tortola"], "KY": ["America/Cayman"],
        "DM": ["America/Dominica"], "DO": ["America/Santo_Domingo"], "GD": ["America/Grenada"], "JM": ["America/Jamaica"],
        "MS": ["America/Montserrat"], "KN": ["America/St_Kitts"], "LC": ["America/St_Lucia"], "VC": ["America/St_Vincent"],
        "SX": ["America/Lower_Princes"], "TT": ["America/Port_of_Spain"], "TC": ["America/Grand_Turk"],
    ]

    static let countryNames: [String: String] = [
        "US": "the United States", "CA": "Canada", "PR": "Puerto Rico", "VI": "the US Virgin Islands", "GU": "Guam",
        "MP": "the Northern Mariana Islands", "AS": "American Samoa", "AG": "Antigua and Barbuda", "AI": "Anguilla",
        "BS": "the Bahamas", "BB": "Barbados", "BM": "Bermuda", "VG": "the British Virgin Islands", "KY": "the Cayman Islands",
        "DM": "Dominica", "DO": "the Dominican Republic", "GD": "Grenada", "JM": "Jamaica", "MS": "Montserrat",
        "KN": "Saint Kitts and Nevis", "LC": "Saint Lucia", "VC": "Saint Vincent and the Grenadines", "SX": "Sint Maarten",
        "TT": "Trinidad and Tobago", "TC": "the Turks and Caicos Islands",
    ]

    /// Area codes outside the United States (and 600/622, Canada's non-geographic codes).
    static let countryByAreaCode: [String: String] = {
        var table: [String: String] = [:]
        let canada =
            "204 226 236 249 250 257 263 289 306 343 354 365 367 368 382 403 416 418 428 431 437 438 450 468 474 506 514 519 548 579 581 "
            + "584 587 600 604 613 622 639 647 672 683 705 709 742 753 778 780 782 807 819 825 867 873 879 902 905 942"
        for code in canada.split(separator: " ") { table[String(code)] = "CA" }
        let others: [(String, String)] = [
            ("787", "PR"), ("939", "PR"), ("340", "VI"), ("671", "GU"), ("670", "MP"), ("684", "AS"), ("268", "AG"), ("264", "AI"),
            ("242", "BS"), ("246", "BB"), ("441", "BM"), ("284", "VG"), ("345", "KY"), ("767", "DM"), ("809", "DO"), ("829", "DO"),
            ("849", "DO"), ("473", "GD"), ("876", "JM"), ("658", "JM"), ("664", "MS"), ("869", "KN"), ("758", "LC"), ("784", "VC"),
            ("721", "SX"), ("868", "TT"), ("649", "TC"),
        ]
        for (code, country) in others { table[code] = country }
        return table
    }()

    /// Area code → the IANA zones it spans (several where an area code crosses a zone boundary).
    static let zonesByAreaCode: [String: [String]] = {
        let eastern = "America/New_York"
        let central = "America/Chicago"
        let mountain = "America/Denver"
        let pacific = "America/Los_Angeles"
        let groups: [([String], String)] = [
            // United States (by state; split states list both zones on the codes that cross).
            (
                [eastern],
                "203 475 860 959 302 202 771 239 305 321 324 352 386 407 561 645 656 689 727 728 754 772 786 813 863 904 941 954 "
                    + "229 404 470 478 678 706 762 770 912 943 260 317 463 765 207 227 240 301 410 443 667 339 351 413 508 617 774 781 857 978 "
                    + "231 248 269 313 517 586 616 679 734 810 947 989 603 201 551 609 640 732 848 856 862 908 973 212 315 329 332 347 363 "
                    + "516 518 585 607 624 631 646 680 716 718 838 845 914 917 929 934 252 336 472 704 743 828 910 919 980 984 216 220 234 "
                    + "283 326 330 380 419 436 440 513 567 614 740 937 215 223 267 272 412 445 484 570 582 610 717 724 814 835 878 401 "
                    + "803 821 839 843 854 864 423 865 802 276 434 540 571 686 703 757 804 826 948 304 681 502 606 859"
            ),
            (
                [central],
                "205 251 256 334 659 938 479 501 870 327 217 224 309 312 331 447 464 618 630 708 730 773 779 815 847 861 872 219 319 "
                    + "515 563 641 712 316 913 225 318 337 504 985 218 320 507 612 651 763 952 228 601 662 769 314 417 557 573 636 660 816 "
                    + "975 402 531 405 539 572 580 918 615 629 731 901 210 214 254 281 325 346 361 409 430 469 512 682 713 726 737 806 817 "
                    + "830 832 903 936 940 945 956 972 979 262 274 353 414 534 608 715 920"
            ),
            ([eastern, central], "850 448 812 930 574 270 364 931 906"),
            ([central, mountain], "620 785 308 701 605 432"),
            ([mountain], "303 719 720 970 983 406 505 575 385 435 801 307 915"),
            (["America/Phoenix"], "480 520 602 623"),
            (["America/Phoenix", mountain], "928"),
            (["America/Boise", pacific], "208 986"),
            ([pacific], "209 213 279 310 323 341 350 369 408 415 424 442 510 530 559 562 619 626 628 650 657 661 669 707 714 738 747 760 "
                + "805 818 820 831 837 840 858 909 916 925 949 951 702 725 206 253 360 425 509 564 503 971"),
            ([pacific, mountain], "775 458 541"),
            (["America/Anchorage", "America/Adak"], "907"),
            (["Pacific/Honolulu"], "808"),
            // Canada.
            (["America/Vancouver"], "236 257 604 672 778"),
            (["America/Vancouver", "America/Edmonton"], "250"),
            (["America/Edmonton"], "368 403 587 780 825"),
            (["America/Regina"], "306 474 639"),
            (["America/Winnipeg"], "204 431 584"),
            (["America/Toronto"], "226 249 289 343 365 382 416 437 519 548 613 647 683 705 742 753 905 942 263 354 438 450 468 514 579 819 873"),
            (["America/Toronto", "America/Winnipeg"], "807"),
            (["America/Toronto", "America/Halifax"], "367 418 581"),
            (["America/Moncton"], "428 506"),
            (["America/Halifax"], "782 902"),
            (["America/St_Johns", "America/Goose_Bay"], "709 879"),
            (["America/Whitehorse", "America/Yellowknife", "America/Iqaluit"], "867"),
        ]
        var table: [String: [String]] = [:]
        for (zones, codes) in groups {
            for code in codes.split(separator: " ") { table[String(code), default: []].append(contentsOf: zones) }
        }
        for (code, country) in countryByAreaCode where table[code] == nil { table[code] = countries[country] }
        return table
    }()
}
