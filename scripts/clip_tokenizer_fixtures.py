"""Reference ids for the `data` crate's CLIP tokenizer (crates/data/src/clip_bpe.rs).

Run with the reference venv (transformers 5.25, tokenizers 0.23), offline:

    /work/venv-ref/bin/python scripts/clip_tokenizer_fixtures.py [BPE_MERGES_GZ]

BPE_MERGES_GZ is CLIP's own merge list, `bpe_simple_vocab_16e6.txt.gz` (openai/CLIP ships it, and
so does the `open-clip-torch` wheel on PyPI: `pip download open-clip-torch --no-deps`, then unzip
`open_clip/bpe_simple_vocab_16e6.txt.gz`). The vocabulary is built from its first MERGES merges
the way CLIP builds its own (the 256 byte characters, the same with `</w>`, the merges'
concatenations, then the two specials), so every id here is the id of the real 49,408-token
vocabulary ("a</w>" is 320, "photo</w>" 1125).

Writes crates/data/tests/fixtures/clip_bpe/:
- `vocab.json`, `merges.txt`: the layout of a Hugging Face CLIP checkpoint (openai/clip-vit-*);
- `saved/`: what `CLIPTokenizer.save_pretrained` writes in transformers 5 (`tokenizer.json`,
  re-dumped without indentation to stay small, and `tokenizer_config.json`);
- `cases.json.gz`: `{"cases": [[group, text, max_length, ids], ...], "batch": {...}}`, the ids
  transformers gives with `truncation=True, max_length=max_length` for texts generated here from a
  fixed seed, and one padded batch;
- `unicode.json.gz`: the code points Oniguruma puts in `\\p{L}`, `\\p{N}` and `\\s` (ranges), and
  every code point CLIP's normalizer (NFC, whitespace, lowercase) changes when alone, with its
  output;
and crates/data/src/clip_bpe/tables.rs, the `\\p{L}` and `\\p{N}` ranges as Rust tables: the
`unicode_categories` crate's tables are Unicode 9, 25,314 letters short of the 141,028 that
`tokenizers`' Oniguruma (Unicode 16) matches.

transformers 5 has only the `tokenizers`-backed CLIPTokenizer (the old `CLIPTokenizerFast`), so the
ids are its ids. The script also runs a copy of transformers 4's pure-Python CLIPTokenizer (its
path without ftfy) and prints, per group, how many texts the two disagree on.
"""

import gzip
import io
import json
import os
import random
import sys
import unicodedata

import regex
from tokenizers import Regex, normalizers
from transformers import CLIPTokenizer

MERGES = 1500
SEED = 44
ROOT = os.path.join(os.path.dirname(__file__), "..")
OUT = os.path.join(ROOT, "crates", "data", "tests", "fixtures", "clip_bpe")
TABLES = os.path.join(ROOT, "crates", "data", "src", "clip_bpe", "tables.rs")
SPECIALS = ["<|startoftext|>", "<|endoftext|>"]


def bytes_to_unicode():
    """GPT-2's map from bytes to printable characters (CLIP's `bytes_to_unicode`)."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def write_vocab(merges_gz):
    lines = gzip.open(merges_gz).read().decode("utf-8").split("\n")
    merges = [tuple(line.split()) for line in lines[1 : 1 + MERGES]]
    vocab = list(bytes_to_unicode().values())
    vocab += [v + "</w>" for v in vocab]
    vocab += ["".join(m) for m in merges] + SPECIALS
    with open(os.path.join(OUT, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump({t: i for i, t in enumerate(vocab)}, f, ensure_ascii=False)
    with open(os.path.join(OUT, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    return {t: i for i, t in enumerate(vocab)}, merges


CLASSES = [
    "apple", "aquarium fish", "baby", "bear", "beaver", "bed", "bee", "beetle", "bicycle", "bottle",
    "bowl", "boy", "bridge", "bus", "butterfly", "camel", "can", "castle", "caterpillar", "cattle",
    "chair", "chimpanzee", "clock", "cloud", "cockroach", "couch", "crab", "crocodile", "cup",
    "dinosaur", "dolphin", "elephant", "flatfish", "forest", "fox", "girl", "hamster", "house",
    "kangaroo", "keyboard", "lamp", "lawn_mower", "leopard", "lion", "lizard", "lobster", "man",
    "maple_tree", "motorcycle", "mountain", "mouse", "mushroom", "oak_tree", "orange", "orchid",
    "otter", "palm_tree", "pear", "pickup_truck", "pine_tree", "plain", "plate", "poppy",
    "porcupine", "possum", "rabbit", "raccoon", "ray", "road", "rocket", "rose", "sea", "seal",
    "shark", "shrew", "skunk", "skyscraper", "snail", "snake", "spider", "squirrel", "streetcar",
    "sunflower", "sweet_pepper", "table", "tank", "telephone", "television", "tiger", "tractor",
    "train", "trout", "tulip", "turtle", "wardrobe", "whale", "willow_tree", "wolf", "woman",
    "worm", "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
    "Bag", "Ankle boot", "great white shark", "hammerhead", "tench", "goldfish", "jack-o'-lantern",
    "Granny Smith", "yellow lady's slipper", "Cardigan Welsh corgi", "crème brûlée", "jalapeño",
]
TEMPLATES = [
    "a photo of a {}.", "a bad photo of the {}.", "a photo of many {}.", "a sculpture of a {}.",
    "a rendering of a {}.", "graffiti of the {}.", "a cropped photo of the {}.", "a tattoo of a {}.",
    "the embroidered {}.", "a bright photo of a {}.", "a photo of a clean {}.",
    "a photo of a dirty {}.", "a dark photo of the {}.", "a drawing of a {}.",
    "a photo of my {}.", "the plastic {}.", "a photo of the cool {}.", "a close-up photo of a {}.",
    "a black and white photo of the {}.", "a painting of the {}.", "a pixelated photo of the {}.",
    "a jpeg corrupted photo of a {}.", "a blurry photo of the {}.", "a photo of the {}.",
    "a good photo of the {}.", "a rendition of the {}.", "a photo of the large {}.",
    "itap of a {}.", "a photo of the small {}.", "a origami {}.", "a {} in a video game.",
    "art of the {}.", "a toy {}.", "a plushie {}.", "a sketch of a {}.", "{}",
    "A PHOTO OF A {}!", "This is a photo of a {}, a type of pet.",
]
WORDS = (
    "the quick brown fox jumps over lazy dog I'm you're we've they'd she'll it's isn't "
    "don't can't won't O'Neil rock'n'roll 'quoted' \"double\" hello world CLIP tokenizer BPE "
    "zero-shot ImageNet-1K ViT-B/16 e-mail http://example.com/a?b=c&d=1 #hashtag @user "
    "3.14159 1,000,000 2024-12-06 10:30am $5.99 50% x^2 a+b=c (parens) [brackets] {braces} "
    "<angle> | ~ ` ... !!! ??? ;-) :D <3 --- ___ *** naïve café résumé Zürich São Paulo "
    "Ærøskøbing Straße İstanbul ΟΔΥΣΣΕΥΣ Ὀδυσσεύς Москва Київ 東京 北京大学 日本語のテキスト "
    "한국어 텍스트 ไทย हिन्दी العربية עברית 😀 👍🏽 👨‍👩‍👧 🇫🇷 ❤️ ✓ ™ © ½ ² ³ Ⅻ ⅷ ١٢٣ ０１２ "
    "ＡＢＣ ﬁnance Ǆ ǅ ǆ ŉ ẞ Σ ς ß ΐ e\u0301 a\u0308 n\u0303 \u00ad soft\u00adhyphen "
    "zero\u200bwidth joiner\u200d ligature œuvre ﬀ Å Å K"
).split(" ")
SPACES = [
    " ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x85", "\xa0", "\u1680", "\u2000",
    "\u2003", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u180e", "\u200b",
    "\ufeff", " \t \n ",
]
ODD_CHARS = [
    "\x00", "\x01", "\x07", "\x1b", "\x7f", "\x9f", "\ufffd", "\u0301", "\u0308", "\u0903",
    "\u20dd", "\ue000", "\U000f0000", "\ufdd0", "\U0001f3fb", "\ufe0f", "\u0378", "\u2066",
    "\U000e0041", "\u0345", "\u0130", "\u1e9e", "\u2126", "\u212a", "\u212b", "\U0001d400",
    "\U00010400", "\u01c5", "\u1f88", "\u0587", "\ufb01", "\u0149", "\u1e96", "\U0001e900",
]


def prompt_texts():
    out = [t.format(c.replace("_", " ")) for c in CLASSES for t in TEMPLATES[:3]]
    out += [t.format(c) for c in CLASSES[::3] for t in TEMPLATES[3:]][:220]
    return out


def word_texts(rng, n):
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 9))]
        seps = [rng.choice(SPACES[:5]) if rng.random() < 0.8 else rng.choice(SPACES) for _ in words]
        text = "".join(w + s for w, s in zip(words, seps))
        out.append(text[: -len(seps[-1])] if rng.random() < 0.7 else " " + text)
    return out


def char_texts(rng, n):
    """Random strings of code points drawn from every plane's interesting corners."""
    pools = [
        [chr(c) for c in range(0x20, 0x7F)],
        [chr(c) for c in range(0xA0, 0x250)],
        [chr(c) for c in range(0x370, 0x530)],
        [chr(c) for c in range(0x900, 0x980)],
        [chr(c) for c in range(0x3040, 0x3100)] + [chr(c) for c in range(0x4E00, 0x4E80)],
        [chr(c) for c in range(0xAC00, 0xAC40)] + [chr(c) for c in range(0x1F300, 0x1F680)],
        [chr(c) for c in range(0x2000, 0x2200)] + [chr(c) for c in range(0xFF00, 0xFFF0)],
        SPACES + ODD_CHARS + ["'", "'s", "'T", "'RE", "'ll", "'d", "'m", "'ve", "0", "9"],
    ]
    out = []
    for _ in range(n):
        k = rng.randint(1, 24)
        out.append("".join(rng.choice(rng.choice(pools)) for _ in range(k)))
    return out


def special_texts():
    base = [
        "<|startoftext|>", "<|endoftext|>", "<|endoftext|><|endoftext|>", "a<|endoftext|>b",
        "A photo<|startoftext|> of a <|endoftext|> cat", "<|ENDOFTEXT|>", "<|EndOfText|> x",
        "<|endoftext", "endoftext|>", "< |endoftext| >", "<|startoftext|>hello<|endoftext|>",
        " <|endoftext|> ", "\t<|startoftext|>\n", "<<|endoftext|>>", "<||endoftext||>",
        "x<|endoftext|>y<|startoftext|>z", "<|endoftext|>'s", "it<|endoftext|>'s",
    ]
    return base + [b.upper() for b in base[:6]]


def edge_texts():
    out = ["", " ", "   ", "\t\n", "\n\n\n", "a", "A", ".", "'", "'s", "''s", "'S", "S'S",
           "don't", "DON'T", "I'M", "y'all", "it's'", "'''", "a's's's", "'sa", "'Sa",
           "0", "00", "2024", "1.5", "-1", "1e10", "٣", "²", "½", "Ⅻ", "ⅻ", "①②",
           "İ", "İstanbul", "ΣΑΣ", "ΌΣΟΣ", "ß", "ẞ", "ﬁ", "Ǆ", "K", "Å", "e\u0301", "e\u0301\u0301",
           "\u1100\u1161\u11a8", "한", "😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "☃", "ai\u0308", "\u0915\u093f",
           "a\x00b", "a\x7fb", "a\u200bb", "a\u00adb", "a\ufeffb", "a\u180eb", "a\ufffdb",
           "\ue000", "a\u0378b", "\U000e0041", "\u2066a\u2069"]
    out += ["a" * n for n in (1, 2, 3, 10, 100, 300)]
    out += ["aaaa bbbb " * 20, "the " * 80, "1" * 90, ". " * 50, "😀" * 30, "東京" * 40]
    return out


def long_texts(rng, n):
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(30, 60))]
        out.append(" ".join(words))
    return out


def all_cases():
    rng = random.Random(SEED)
    groups = [
        ("prompt", prompt_texts()),
        ("words", word_texts(rng, 300)),
        ("chars", char_texts(rng, 250)),
        ("special", special_texts()),
        ("edge", edge_texts()),
        ("long", long_texts(rng, 40)),
    ]
    cases = [(g, t, 77) for g, texts in groups for t in texts]
    shorts = [2, 3, 5, 8, 16]
    cases += [("short", t, shorts[i % len(shorts)]) for i, t in enumerate(word_texts(rng, 40))]
    return cases


# BasicTokenizer's `_is_chinese_char` blocks.
CJK = [
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
]


class SlowClip:
    """transformers 4's CLIPTokenizer without ftfy: BasicTokenizer(strip_accents=False,
    do_split_on_punc=False) (clean, space out CJK, NFC, split on whitespace, `str.lower`), the
    regex with IGNORECASE, and the greedy BPE. The specials are split off first, as its added-token
    trie did."""

    PAT = regex.compile(
        r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+""",
        regex.IGNORECASE,
    )

    def __init__(self, vocab, merges):
        self.encoder = vocab
        self.ranks = {m: i for i, m in enumerate(merges)}
        self.byte_encoder = bytes_to_unicode()

    @staticmethod
    def basic(text):
        """BasicTokenizer.tokenize: drop NUL, U+FFFD and every C* character but tab, newline and
        carriage return; space, tab, newline, carriage return and Zs become spaces; CJK
        ideographs spaced out; NFC; split on whitespace; `str.lower` each word."""
        cleaned = []
        for c in text:
            if c in "\x00\ufffd" or (c not in "\t\n\r" and unicodedata.category(c).startswith("C")):
                continue
            if c in " \t\n\r" or unicodedata.category(c) == "Zs":
                cleaned.append(" ")
            elif any(lo <= ord(c) <= hi for lo, hi in CJK):
                cleaned.append(f" {c} ")
            else:
                cleaned.append(c)
        text = unicodedata.normalize("NFC", "".join(cleaned))
        return " ".join(t.lower() for t in text.strip().split())

    def bpe(self, token):
        word = tuple(token[:-1]) + (token[-1] + "</w>",)
        while len(word) > 1:
            pairs = {(a, b) for a, b in zip(word, word[1:])}
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            out, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = tuple(out)
        return word

    def stretch(self, text):
        ids = []
        for token in self.PAT.findall(self.basic(text)):
            token = "".join(self.byte_encoder[b] for b in token.encode("utf-8"))
            ids += [self.encoder.get(p, self.encoder["<|endoftext|>"]) for p in self.bpe(token)]
        return ids

    def encode(self, text, max_length):
        ids = []
        for i, part in enumerate(regex.split(r"(<\|startoftext\|>|<\|endoftext\|>)", text)):
            ids += [self.encoder[part]] if i % 2 else self.stretch(part)
        ids = ids[: max_length - 2]
        return [self.encoder[SPECIALS[0]], *ids, self.encoder[SPECIALS[1]]]


def code_points():
    """Every scalar value but U+0001 (the marker below), in chunks."""
    for start in range(0, 0x110000, 0x1000):
        yield [c for c in range(start, start + 0x1000) if not 0xD800 <= c <= 0xDFFF and c != 1]


def class_ranges(pattern):
    """The code points Oniguruma (the engine of `tokenizers`' Regex) puts in a class, as ranges."""
    marker = normalizers.Replace(Regex(pattern), "\x01")
    ranges = []
    for cps in code_points():
        text = "".join(map(chr, cps))
        out = marker.normalize_str(text)
        assert len(out) == len(text)
        for c, o in zip(cps, out):
            if o != "\x01":
                continue
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1][1] = c
            else:
                ranges.append([c, c])
    return ranges


def normalized_chars(tokenizer):
    """[code point, text] for every code point that CLIP's normalizer changes, alone."""
    norm = tokenizer.backend_tokenizer.normalizer
    changed = []
    for cps in code_points():
        for c in cps:
            out = norm.normalize_str(chr(c))
            if out != chr(c):
                changed.append([c, out])
    return changed


def write_tables(letters, numbers):
    """The Rust tables of \\p{L} and \\p{N} (crates/data/src/clip_bpe/tables.rs)."""

    def table(name, ranges):
        pairs = [f"(0x{a:X}, 0x{b:X})," for a, b in ranges]
        rows = ["    " + " ".join(pairs[i : i + 6]) for i in range(0, len(pairs), 6)]
        return f"pub(super) static {name}: [(u32, u32); {len(ranges)}] = [\n" + "\n".join(rows) + "\n];\n"

    with open(TABLES, "w", encoding="utf-8") as f:
        f.write(
            "//! Generated by scripts/clip_tokenizer_fixtures.py: the ranges of code points that Oniguruma\n"
            "//! (the regex engine of Hugging Face `tokenizers` 0.23, Unicode 16) matches with `\\p{L}` and\n"
            "//! `\\p{N}`, sorted and disjoint. Do not edit by hand.\n\n"
            "#[rustfmt::skip]\n" + table("LETTERS", letters) + "\n"
            "#[rustfmt::skip]\n" + table("NUMBERS", numbers)
        )


def gzip_text(path):
    """A gzip file to write text to, with no time stamp, so that a rerun writes the same bytes."""
    raw = gzip.GzipFile(path, "wb", compresslevel=9, mtime=0)
    return io.TextIOWrapper(raw, encoding="utf-8")


def main():
    merges_gz = sys.argv[1] if len(sys.argv) > 1 else "/tmp/oc/open_clip/bpe_simple_vocab_16e6.txt.gz"
    os.makedirs(os.path.join(OUT, "saved"), exist_ok=True)
    vocab, merges = write_vocab(merges_gz)
    files = CLIPTokenizer(vocab=os.path.join(OUT, "vocab.json"), merges=os.path.join(OUT, "merges.txt"))
    files.save_pretrained(os.path.join(OUT, "saved"))
    path = os.path.join(OUT, "saved", "tokenizer.json")
    with open(path, encoding="utf-8") as f:
        tokenizer_json = json.load(f)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tokenizer_json, f, ensure_ascii=False, separators=(",", ":"))
    saved = CLIPTokenizer.from_pretrained(os.path.join(OUT, "saved"))
    slow = SlowClip(vocab, merges)

    cases, disagree, totals = [], {}, {}
    for group, text, max_length in all_cases():
        ids = files(text, truncation=True, max_length=max_length)["input_ids"]
        assert ids == saved(text, truncation=True, max_length=max_length)["input_ids"], text
        cases.append([group, text, max_length, ids])
        totals[group] = totals.get(group, 0) + 1
        if slow.encode(text, max_length) != ids:
            disagree.setdefault(group, []).append(text)
    # A checkpoint whose pad token is "!" (LAION's): transformers matches it in the raw text too.
    bang = CLIPTokenizer(
        vocab=os.path.join(OUT, "vocab.json"), merges=os.path.join(OUT, "merges.txt"), pad_token="!"
    )
    bang_texts = ["hi! a photo!!", "!", "a ! b", "wow!?", "!!!<|endoftext|>!", "no bang here"]
    bang_cases = [[t, bang(t, truncation=True, max_length=77)["input_ids"]] for t in bang_texts]
    batch_texts = [c[1] for c in cases[:6]] + ["", "a <|endoftext|> inside", "a photo of a " + "very " * 90 + "big cat."]
    batch = files(batch_texts, truncation=True, max_length=77, padding=True)
    eos = files.eos_token_id
    first_eos = [row.index(eos) for row in batch["input_ids"]]
    # CLIPTextTransformer's two pooling rules: argmax of the ids (configs with eos_token_id 2, as
    # openai's) and the first eos id (the others).
    argmax = [max(range(len(row)), key=lambda i: (row[i], -i)) for row in batch["input_ids"]]
    with gzip_text(os.path.join(OUT, "cases.json.gz")) as f:
        json.dump(
            {
                "merges": MERGES,
                "cases": cases,
                "batch": {
                    "texts": batch_texts,
                    "input_ids": batch["input_ids"],
                    "attention_mask": batch["attention_mask"],
                    "first_eos": first_eos,
                    "argmax": argmax,
                },
                "bang": bang_cases,
            },
            f,
            ensure_ascii=False,
            separators=(",", ":"),
        )
    letters, numbers, spaces = (class_ranges(p) for p in (r"\p{L}", r"\p{N}", r"\s"))
    write_tables(letters, numbers)
    with gzip_text(os.path.join(OUT, "unicode.json.gz")) as f:
        json.dump(
            {
                "letters": letters,
                "numbers": numbers,
                "spaces": spaces,
                "normalized": normalized_chars(files),
            },
            f,
            ensure_ascii=False,
            separators=(",", ":"),
        )
    print(f"{len(cases)} texts; transformers 4's slow tokenizer disagrees on:")
    for group in totals:
        texts = disagree.get(group, [])
        print(f"  {group}: {len(texts)} of {totals[group]}", [t[:40] for t in texts[: 6 if group != "edge" else 99]])


if __name__ == "__main__":
    main()
