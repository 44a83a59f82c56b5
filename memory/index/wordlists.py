"""Word lists of the analysis, as data: the stop words, the accent table and the English
irregular verbs (ours: past forms with their base verb, for :func:`memory.index.words.base_forms`).

Copied from whoosh-reloaded 2.7.5 (``whoosh.lang.stopwords``: Spanish and English;
``whoosh.support.charset.accent_map``), the lists this store's terms were always made with,
so that the query's words (:mod:`memory.index.words`) and the tantivy analyzers are the same
without importing Whoosh. Whoosh's own analyzers are built from these lists too
(:mod:`memory.index.whoosh.analysis`); ``tests/test_index.py`` checks that they still equal
Whoosh's.
"""

from __future__ import annotations

SPANISH = frozenset((  # Whoosh's Spanish stop words
    "a al algo algunas algunos ante antes como con contra cual cuando de del desde donde "
    "durante e el ella ellas ellos en entre era erais eran eras eres es esa esas ese eso esos "
    "esta estaba estabais estaban estabas estad estada estadas estado estados estamos estando "
    "estar estaremos estará estarán estarás estaré estaréis estaría estaríais estaríamos "
    "estarían estarías estas este estemos esto estos estoy estuve estuviera estuvierais "
    "estuvieran estuvieras estuvieron estuviese estuvieseis estuviesen estuvieses estuvimos "
    "estuviste estuvisteis estuviéramos estuviésemos estuvo está estábamos estáis están estás "
    "esté estéis estén estés fue fuera fuerais fueran fueras fueron fuese fueseis fuesen fueses "
    "fui fuimos fuiste fuisteis fuéramos fuésemos ha habida habidas habido habidos habiendo "
    "habremos habrá habrán habrás habré habréis habría habríais habríamos habrían habrías "
    "habéis había habíais habíamos habían habías han has hasta hay haya hayamos hayan hayas "
    "hayáis he hemos hube hubiera hubierais hubieran hubieras hubieron hubiese hubieseis "
    "hubiesen hubieses hubimos hubiste hubisteis hubiéramos hubiésemos hubo la las le les lo "
    "los me mi mis mucho muchos muy más mí mía mías mío míos nada ni no nos nosotras nosotros "
    "nuestra nuestras nuestro nuestros o os otra otras otro otros para pero poco por porque que "
    "quien quienes qué se sea seamos sean seas sentid sentida sentidas sentido sentidos seremos "
    "será serán serás seré seréis sería seríais seríamos serían serías seáis siente sin "
    "sintiendo sobre sois somos son soy su sus suya suyas suyo suyos sí también tanto te "
    "tendremos tendrá tendrán tendrás tendré tendréis tendría tendríais tendríamos tendrían "
    "tendrías tened tenemos tenga tengamos tengan tengas tengo tengáis tenida tenidas tenido "
    "tenidos teniendo tenéis tenía teníais teníamos tenían tenías ti tiene tienen tienes todo "
    "todos tu tus tuve tuviera tuvierais tuvieran tuvieras tuvieron tuviese tuvieseis tuviesen "
    "tuvieses tuvimos tuviste tuvisteis tuviéramos tuviésemos tuvo tuya tuyas tuyo tuyos tú un "
    "una uno unos vosostras vosostros vuestra vuestras vuestro vuestros y ya yo él éramos"
).split())

ENGLISH = frozenset((  # Whoosh's English stop words
    "a about above after again against all am an and any are as at be because been before being "
    "below between both but by can did do does doing don down during each few for from further "
    "had has have having he her here hers herself him himself his how i if in into is it its "
    "itself just me more most my myself no nor not now of off on once only or other our ours "
    "ourselves out over own s same she should so some such t than that the their theirs them "
    "themselves then there these they this those through to too under until up very was we were "
    "what when where which while who whom why will with you your yours yourself yourselves"
).split())

ACCENTS: dict[str, str] = {  # target letter: every character folded to it
    "0": "\uff10",
    "1": "\uff11",
    "2": "\uff12",
    "3": "\uff13",
    "4": "\uff14",
    "5": "\uff15",
    "6": "\uff16",
    "7": "\uff17",
    "8": "\uff18",
    "9": "\uff19",
    "A": "\uff21",
    "B": "\uff22",
    "C": "\uff23",
    "D": "\uff24",
    "E": "\uff25",
    "F": "\uff26",
    "G": "\uff27",
    "H": "\uff28",
    "I": "\uff29",
    "J": "\uff2a",
    "K": "\uff2b",
    "L": "\uff2c",
    "M": "\uff2d",
    "N": "\uff2e",
    "O": "\uff2f",
    "P": "\uff30",
    "Q": "\uff31",
    "R": "\uff32",
    "S": "\uff33",
    "T": "\uff34",
    "U": "\uff35",
    "V": "\uff36",
    "W": "\uff37",
    "X": "\uff38",
    "Y": "\uff39",
    "Z": "\uff3a",
    "a": (
        "\u00c0\u00c1\u00c2\u00c3\u00c4\u00c5\u00e0\u00e1\u00e2\u00e3\u00e4\u00e5\u0100\u0101"
        "\u0102\u0103\u0104\u0105\u0139\u01cd\u01ce\u01de\u01df\u01e0\u01e1\u01e2\u01e3\u01fa"
        "\u01fb\u01fc\u01fd\u0200\u0201\u0202\u0203\u0226\u0227\u023a\u1e00\u1e01\u1e9a\u1ea0"
        "\u1ea1\u1ea2\u1ea3\u1ea4\u1ea5\u1ea6\u1ea7\u1ea8\u1ea9\u1eaa\u1eab\u1eac\u1ead\u1eae"
        "\u1eaf\u1eb0\u1eb1\u1eb2\u1eb3\u1eb4\u1eb5\u1eb6\u1eb7\u2c65\uff41"),
    "b": "\u0180\u0181\u0182\u0183\u0243\u0253\u1d6c\u1e02\u1e03\u1e04\u1e05\u1e06\u1e07\uff42",
    "c": (
        "\u00c7\u00e7\u0106\u0107\u0108\u0109\u010a\u010b\u010c\u010d\u0187\u0188\u023b\u023c"
        "\u0255\u1e08\u1e09\uff43"),
    "d": (
        "\u00f0\u010e\u010f\u0110\u0111\u0189\u018a\u018b\u018c\u0221\u0256\u0257\u1d6d\u1e0a"
        "\u1e0b\u1e0c\u1e0d\u1e0e\u1e0f\u1e10\u1e11\u1e12\u1e13\uff44"),
    "e": (
        "\u00c8\u00c9\u00ca\u00cb\u00e8\u00e9\u00ea\u00eb\u0112\u0113\u0114\u0115\u0116\u0117"
        "\u0118\u0119\u011a\u011b\u018e\u018f\u01dd\u0204\u0205\u0206\u0207\u0228\u0229\u0246"
        "\u0247\u025a\u025d\u1e14\u1e15\u1e16\u1e17\u1e18\u1e19\u1e1a\u1e1b\u1e1c\u1e1d\u1eb8"
        "\u1eb9\u1eba\u1ebb\u1ebc\u1ebd\u1ebe\u1ebf\u1ec0\u1ec1\u1ec2\u1ec3\u1ec4\u1ec5\u1ec6"
        "\u1ec7\uff45"),
    "f": "\u0191\u0192\u1d6e\u1e1e\u1e1f\uff46",
    "g": (
        "\u011c\u011d\u011e\u011f\u0120\u0121\u0122\u0123\u0193\u01e4\u01e5\u01e6\u01e7\u01f4"
        "\u01f5\u0260\u1e20\u1e21\uff47"),
    "h": (
        "H\u0124\u0125\u0126\u0127\u021e\u021f\u0331\u1e22\u1e23\u1e24\u1e25\u1e26\u1e27"
        "\u1e28\u1e29\u1e2a\u1e2b\u1e96\u2c67\u2c68\uff48"),
    "i": (
        "Ii\u00cc\u00cd\u00ce\u00cf\u00ec\u00ed\u00ee\u00ef\u0128\u0129\u012a\u012b\u012c"
        "\u012d\u012e\u012f\u0130\u0131\u0197\u01cf\u01d0\u0208\u0209\u020a\u020b\u0268\u1e2c"
        "\u1e2d\u1e2e\u1e2f\u1ec8\u1ec9\u1eca\u1ecb\uff49"),
    "j": "J\u0134\u0135\u01f0\u0237\u0248\u0249\u025f\u0284\u029d\u030c\uff4a",
    "k": (
        "\u0136\u0137\u0198\u0199\u01e8\u01e9\u1e30\u1e31\u1e32\u1e33\u1e34\u1e35\u2c69\u2c6a"
        "\uff4b"),
    "l": (
        "\u013a\u013b\u013c\u013d\u013e\u013f\u0140\u0141\u0142\u019a\u0234\u023d\u026b\u026c"
        "\u026d\u0323\u1e36\u1e37\u1e38\u1e39\u1e3a\u1e3b\u1e3c\u1e3d\u2c60\u2c61\u2c62\uff4c"),
    "m": "\u0271\u1e3e\u1e3f\u1e40\u1e41\u1e42\u1e43\uff4d",
    "n": (
        "Nn\u00d1\u00f1\u0143\u0144\u0145\u0146\u0147\u0148\u019d\u019e\u01f8\u01f9\u0220"
        "\u0235\u0272\u0273\u1e44\u1e45\u1e46\u1e47\u1e48\u1e49\u1e4a\u1e4b\uff4e"),
    "o": (
        "\u00d2\u00d3\u00d4\u00d5\u00d6\u00d8\u00f2\u00f3\u00f4\u00f5\u00f6\u00f8\u014c\u014d"
        "\u014e\u014f\u0150\u0151\u019f\u01a0\u01a1\u01d1\u01d2\u01ea\u01eb\u01ec\u01ed\u01fe"
        "\u01ff\u020c\u020d\u020e\u020f\u022a\u022b\u022c\u022d\u022e\u022f\u0230\u0231\u0275"
        "\u1e4c\u1e4d\u1e4e\u1e4f\u1e50\u1e51\u1e52\u1e53\u1ecc\u1ecd\u1ece\u1ecf\u1ed0\u1ed1"
        "\u1ed2\u1ed3\u1ed4\u1ed5\u1ed6\u1ed7\u1ed8\u1ed9\u1eda\u1edb\u1edc\u1edd\u1ede\u1edf"
        "\u1ee0\u1ee1\u1ee2\u1ee3\uff4f"),
    "p": "Pp\u01a4\u01a5\u0303\u1e54\u1e55\u1e56\u1e57\u2c63\uff50",
    "q": "\u024a\u024b\u02a0\uff51",
    "r": (
        "\u0154\u0155\u0156\u0157\u0158\u0159\u0210\u0211\u0212\u0213\u024c\u024d\u027c\u027d"
        "\u027e\u1d72\u1d73\u1e58\u1e59\u1e5a\u1e5b\u1e5c\u1e5d\u1e5e\u1e5f\u2c64\uff52"),
    "s": (
        "Ss\u00df\u015a\u015b\u015c\u015d\u015e\u015f\u0160\u0161\u0218\u0219\u0282\u0329"
        "\u1e60\u1e61\u1e62\u1e63\u1e64\u1e65\u1e66\u1e67\u1e68\u1e69\u1e9b\uff53"),
    "t": (
        "T\u00de\u00fe\u0162\u0163\u0164\u0165\u0166\u0167\u01ab\u01ac\u01ad\u01ae\u021a"
        "\u021b\u0236\u023e\u0288\u0308\u1d75\u1e6a\u1e6b\u1e6c\u1e6d\u1e6e\u1e6f\u1e70\u1e71"
        "\u1e97\u2c66\uff54"),
    "u": (
        "\u00d9\u00da\u00db\u00dc\u00f9\u00fa\u00fb\u00fc\u0168\u0169\u016a\u016b\u016c\u016d"
        "\u016e\u016f\u0170\u0171\u0172\u0173\u01af\u01b0\u01d3\u01d4\u01d5\u01d6\u01d7\u01d8"
        "\u01d9\u01da\u01db\u01dc\u0214\u0215\u0216\u0217\u0244\u0289\u1e72\u1e73\u1e74\u1e75"
        "\u1e76\u1e77\u1e78\u1e79\u1e7a\u1e7b\u1ee4\u1ee5\u1ee6\u1ee7\u1ee8\u1ee9\u1eea\u1eeb"
        "\u1eec\u1eed\u1eee\u1eef\u1ef0\u1ef1\uff55"),
    "v": "\u01b2\u028b\u1e7c\u1e7d\u1e7e\u1e7f\uff56",
    "w": (
        "W\u0174\u0175\u1e80\u1e81\u1e82\u1e83\u1e84\u1e85\u1e86\u1e87\u1e88\u1e89\u1e98"
        "\uff57"),
    "x": "\u1e8a\u1e8b\u1e8c\u1e8d\uff58",
    "y": (
        "Y\u00dd\u00fd\u00ff\u0176\u0177\u0178\u01b3\u01b4\u0232\u0233\u024e\u024f\u028f"
        "\u030a\u1e8e\u1e8f\u1e99\u1ef2\u1ef3\u1ef4\u1ef5\u1ef6\u1ef7\u1ef8\u1ef9\uff59"),
    "z": (
        "\u0179\u017a\u017b\u017c\u017d\u017e\u01b5\u01b6\u01ba\u01ee\u01ef\u0224\u0225\u0290"
        "\u0291\u1e90\u1e91\u1e92\u1e93\u1e94\u1e95\u2c6b\u2c6c\uff5a"),
}

# English irregular past tenses and participles with their base verb: a question asks "when
# did she choose", a turn says "I chose". The Snowball stemmer joins regular forms (added,
# adding, add) but leaves these apart. Forms that are as often another word are left out
# (bit, drew, felt, found, left, lay, rose, saw, shot, rung, fell), so are forms equal to
# their base (cost, put) and the stop words (was, had, did).
_IRREGULAR = (
    "arose arisen:arise awoke awoken:awake bore borne:bear beaten:beat became:become "
    "began begun:begin bent:bend bitten:bite bled:bleed blew blown:blow broke broken:break "
    "bred:breed brought:bring built:build burnt:burn bought:buy caught:catch "
    "chose chosen:choose clung:cling came:come crept:creep dealt:deal dug:dig drawn:draw "
    "dreamt:dream drank drunk:drink drove driven:drive ate eaten:eat fallen:fall fed:feed "
    "fought:fight fled:flee flung:fling flew flown:fly forbade forbidden:forbid "
    "forgot forgotten:forget forgave forgiven:forgive froze frozen:freeze got gotten:get "
    "gave given:give went gone:go grew grown:grow hung:hang heard:hear hid hidden:hide "
    "held:hold kept:keep knelt:kneel knew known:know laid:lay led:lead leapt:leap "
    "learnt:learn lent:lend lit:light lost:lose made:make meant:mean met:meet paid:pay "
    "proven:prove rode ridden:ride rang:ring risen:rise ran:run said:say sought:seek "
    "sold:sell sent:send shook shaken:shake shone:shine shown:show shrank shrunk:shrink "
    "sang sung:sing sank sunk:sink sat:sit slept:sleep slid:slide spoke spoken:speak "
    "sped:speed spent:spend spun:spin spat:spit sprang sprung:spring stole stolen:steal "
    "stuck:stick stung:sting stank:stink strode:stride struck:strike strove striven:strive "
    "swore sworn:swear swept:sweep swam swum:swim swung:swing took taken:take taught:teach "
    "tore torn:tear told:tell thought:think threw thrown:throw understood:understand "
    "woke woken:wake wore worn:wear wove woven:weave wept:weep won:win wrote written:write "
    "withdrew withdrawn:withdraw overcame:overcome undertook undertaken:undertake")


def _base_verbs(pairs: str) -> dict[str, str]:
    table: dict[str, str] = {}
    forms: list[str] = []
    for token in pairs.split():
        last, colon, base = token.partition(":")
        forms.append(last)
        if colon:
            table.update(dict.fromkeys(forms, base))
            forms = []
    return table


ENGLISH_IRREGULAR = _base_verbs(_IRREGULAR)
