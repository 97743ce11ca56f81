// Cross-check of attn-viz's tokenizer.json reader against an independent implementation, the npm
// package @huggingface/tokenizers (pure JavaScript): every tokenizer.json under SHARED/models, and
// the forms written here from their files (GPT-2, Llama 3 and Qwen2 style byte-level BPE, Metaspace
// SentencePiece; Phi-3's GGUF vocabulary converted as Hugging Face converts SentencePiece models),
// encodes a few hundred fresh random strings (mixed scripts, spaces, punctuation, digits, emoji,
// accents) and llama.cpp's vocabulary test strings, with the special tokens the model takes,
// through `attn-viz tokenize --json` and through the package; the ids must be equal for every
// string. Every mismatch is printed. The seed is printed; ATTN_VIZ_TOKENIZER_SEED=N replays it.
//
// node tokenizer_crosscheck.mjs ATTN_VIZ_BINARY SHARED_DIR PACKAGE_DIR SCRATCH_DIR
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [binary, shared, packageDir, scratch] = process.argv.slice(2);
const { Tokenizer } = createRequire(path.join(packageDir, "package.json"))("@huggingface/tokenizers");

// mulberry32: a small seeded generator, so a failing set of strings can be replayed.
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Pieces random strings are made of: words, runs of spaces, punctuation, digits and characters of
// many scripts, combining accents, emoji (with skin tones and joiners) and special-token text.
const pools = [
  ["the", "The", "Once", "upon", "a", "time", "Lily", "dog", "don't", "I'm", "we'll", "you're", "HELLO", "naïve", "café", "résumé"],
  [" ", "  ", "   ", "\t", "\n", "\n\n", " \n ", "\r\n", "\u00a0", "\u3000", "\u2009"],
  [".", ",", "!", "?", ";", ":", "'", "\"", "-", "--", "...", "(", ")", "[", "]", "{", "}", "<", ">", "/", "\\", "@", "#", "$", "%", "&", "*", "_", "=", "+", "~", "`", "^", "|", "«", "»", "—", "…", "¿", "¡"],
  ["0", "1", "7", "42", "123", "2024", "3.14", "1,000", "١٢٣", "５", "½", "²"],
  ["é", "è", "ñ", "ü", "ö", "ç", "ø", "å", "ß", "Ç", "É", "Ω", "e\u0301", "a\u0308", "n\u0303", "ﬁ", "Å"],
  ["Привет", "мир", "Γειά", "σου", "שלום", "مرحبا", "नमस्ते", "こんにちは", "カタカナ", "你好", "世界", "한국어", "ไทย", "Ελληνικά", "Ꭰ", "ᚠ"],
  ["😀", "🙂", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "🤖", "✨", "🦙", "☃"],
  ["<s>", "</s>", "<unk>", "[CLS]", "[SEP]", "[UNK]", "[MASK]", "<|endoftext|>"],
];

function random_text(random) {
  const pieces = 1 + Math.floor(random() * 24);
  let text = "";
  for (let i = 0; i < pieces; ++i) {
    const pool = pools[Math.floor(random() * pools.length)];
    text += pool[Math.floor(random() * pool.length)];
  }
  return text;
}

// llama.cpp's vocabulary test strings: each followed by "\n__ggml_vocab_test__\n".
function vector_strings() {
  const file = path.join(shared, "models/tokenizers/llama.cpp-vocab/ggml-vocab-gpt-2.gguf.inp");
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").split("\n__ggml_vocab_test__\n").slice(0, -1);
}

function tokenizer_files(dir) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...tokenizer_files(full));
    else if (entry.name === "tokenizer.json") found.push(full);
  }
  return found.sort();
}

const seed = process.env.ATTN_VIZ_TOKENIZER_SEED ? Number(process.env.ATTN_VIZ_TOKENIZER_SEED) : Date.now() % 2147483647;
console.log(`seed ${seed} (replay: ATTN_VIZ_TOKENIZER_SEED=${seed})`);
const random = generator(seed);
const texts = [...vector_strings()];
for (let i = 0; i < 300; ++i) texts.push(random_text(random));
const inputs = path.join(scratch, "texts.jsonl");
fs.writeFileSync(inputs, texts.map((text) => JSON.stringify({ text })).join("\n") + "\n");

// Forms of tokenizer.json the models here do not have, written into SCRATCH/NAME/tokenizer.json
// from the files they do have: GPT-2's (byte-level BPE, from OpenAI's encoder.json and vocab.bpe),
// the Split + ByteLevel form of Llama 3 and Qwen2 (their pre-tokenizer patterns over GPT-2's
// vocabulary; Qwen2's with its NFC normalizer), and the Metaspace form of newer SentencePiece files
// (Mistral, Llama 2) over stories260K's vocabulary.
function write_tokenizer(name, tokenizer, config) {
  fs.mkdirSync(path.join(scratch, name));
  const file = path.join(scratch, name, "tokenizer.json");
  fs.writeFileSync(file, JSON.stringify(tokenizer));
  fs.writeFileSync(path.join(scratch, name, "tokenizer_config.json"), JSON.stringify(config));
  return file;
}

function gpt2_forms() {
  const dir = path.join(shared, "models/tokenizers/gpt2");
  if (!fs.existsSync(path.join(dir, "vocab.bpe"))) return [];
  const merges = fs.readFileSync(path.join(dir, "vocab.bpe"), "utf8").split("\n").slice(1).filter((line) => line !== "");
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, "encoder.json"), "utf8"));
  const byte_level = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
  const gpt2 = {
    version: "1.0",
    added_tokens: [{ id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: byte_level,
    post_processor: byte_level,
    decoder: byte_level,
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "", fuse_unk: false, vocab, merges },
  };
  const split_form = (pattern, normalizer) => ({
    ...gpt2,
    normalizer,
    pre_tokenizer: { type: "Sequence", pretokenizers: [
      { type: "Split", pattern: { Regex: pattern }, behavior: "Isolated", invert: false },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false }] },
    model: { ...gpt2.model, ignore_merges: true },
  });
  const llama3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  const qwen2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  // attn-viz's decode keeps the text exact (no transformers-style clean-up of " ." and " 's").
  const config = { clean_up_tokenization_spaces: false };
  return [write_tokenizer("gpt2", gpt2, config), write_tokenizer("llama3-form", split_form(llama3, null), config),
          write_tokenizer("qwen2-form", split_form(qwen2, { type: "NFC" }), config)];
}

function metaspace_form() {
  const dir = path.join(shared, "models/stories260K-hf");
  if (!fs.existsSync(path.join(dir, "tokenizer.json"))) return [];
  const tokenizer = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  tokenizer.normalizer = null;
  tokenizer.pre_tokenizer = { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false };
  tokenizer.decoder = { type: "Sequence", decoders: [{ type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false },
                                                     { type: "ByteFallback" }] };
  const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
  return [write_tokenizer("stories260K-metaspace", tokenizer, config)];
}

// tokenizer.ggml.tokens, .scores and .token_type of a GGUF file (version 2 or 3).
function read_gguf_vocabulary(file) {
  const bytes = fs.readFileSync(file);
  let at = 8;  // magic "GGUF", version
  const u32 = () => { at += 4; return bytes.readUInt32LE(at - 4); };
  const u64 = () => { at += 8; return Number(bytes.readBigUInt64LE(at - 8)); };
  const string = () => { const n = u64(); at += n; return bytes.toString("utf8", at - n, at); };
  const scalar_bytes = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const value = (type) => {
    if (type === 8) return string();
    if (type === 9) {
      const element = u32(), count = u64();
      return Array.from({ length: count }, () => value(element));
    }
    const start = at;
    at += scalar_bytes[type];
    if (type === 6) return bytes.readFloatLE(start);
    if (type === 5) return bytes.readInt32LE(start);
    return type === 4 ? bytes.readUInt32LE(start) : null;  // the others are not needed here
  };
  u64();  // tensor count
  const metadata = {};
  for (let keys = u64(); keys > 0; --keys) {
    const key = string();
    metadata[key] = value(u32());
  }
  return { tokens: metadata["tokenizer.ggml.tokens"], scores: metadata["tokenizer.ggml.scores"], types: metadata["tokenizer.ggml.token_type"] };
}

// Phi-3's vocabulary-only GGUF (SentencePiece "llama" tokenizer) as the tokenizer.json Hugging
// Face's LlamaConverter writes from a SentencePiece model: BPE whose merges are the splits of each
// normal piece into two normal pieces, ordered by the merged piece's score (then ids), "▁" prepended
// and spaces replaced, byte fallback, BOS first. attn-viz reads the GGUF file itself (its llama
// encoder: score-ordered merges) and, as a second check, the tokenizer.json written here. No added
// tokens: the GGUF encoder takes "<s>" in a text as text, as llama.cpp does by default; and the
// decoding (the package would print "<s>") is not compared.
function phi3_form() {
  const gguf = path.join(shared, "models/tokenizers/llama.cpp-vocab/ggml-vocab-phi-3.gguf");
  if (!fs.existsSync(gguf)) return [];
  const { tokens, scores, types } = read_gguf_vocabulary(gguf);
  const normal = 1, vocab = {};
  tokens.forEach((token, id) => { vocab[token] = id; });
  const merges = [];
  tokens.forEach((piece, id) => {
    if (types[id] !== normal) return;
    const characters = [...piece];
    for (let k = 1; k < characters.length; ++k) {
      const left = characters.slice(0, k).join(""), right = characters.slice(k).join("");
      if (types[vocab[left]] === normal && types[vocab[right]] === normal) merges.push([left, right, id]);
    }
  });
  merges.sort((a, b) => scores[b[2]] - scores[a[2]] || vocab[a[0]] - vocab[b[0]] || vocab[a[1]] - vocab[b[1]]);
  const tokenizer = {
    version: "1.0",
    added_tokens: [],
    normalizer: { type: "Sequence", normalizers: [{ type: "Prepend", prepend: "\u2581" }, { type: "Replace", pattern: { String: " " }, content: "\u2581" }] },
    pre_tokenizer: null,
    post_processor: { type: "TemplateProcessing", single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
                      pair: [], special_tokens: { "<s>": { id: "<s>", ids: [1], tokens: ["<s>"] } } },
    decoder: { type: "Sequence", decoders: [{ type: "Replace", pattern: { String: "\u2581" }, content: " " }, { type: "ByteFallback" }, { type: "Fuse" },
                                            { type: "Strip", content: " ", start: 1, stop: 0 }] },
    model: { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true,
             byte_fallback: true, vocab, merges: merges.map(([left, right]) => left + " " + right) },
  };
  const file = write_tokenizer("phi-3", tokenizer, {});
  return [{ ours: gguf, reference: file, decode: false }, { ours: file, reference: file, decode: false }];
}

// The package's ids (each non-empty list) decoded back to text by attn-viz (tokenize --inputs with
// {"tokens": ids} lines) and by the package, special tokens skipped, with the clean-up of spaces
// before punctuation as `config` asks (T5's tokenizer_config.json does; BERT's WordPiece decoder
// does it on its own). Returns the number of id lists whose texts differ.
function check_decoding(file, reference, config, id_lists) {
  const kept = id_lists.filter((ids) => ids.length > 0);
  const inputs = path.join(scratch, "ids.jsonl");
  fs.writeFileSync(inputs, kept.map((tokens) => JSON.stringify({ tokens })).join("\n") + "\n");
  const run = spawnSync(binary, ["tokenize", "--json", "--tokenizer", file, "--inputs", inputs], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (run.status !== 0) {
    console.log(`FAIL ${file}: attn-viz tokenize exited ${run.status} on ids: ${run.stderr}`);
    return 1;
  }
  const ours = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const options = { skip_special_tokens: true, clean_up_tokenization_spaces: config.clean_up_tokenization_spaces };
  let differ = 0;
  kept.forEach((ids, i) => {
    const expected = reference.decode(ids, options);
    if (expected === ours[i].text) return;
    ++differ;
    console.log(`DECODE MISMATCH ${file} ids ${JSON.stringify(ids)}\n  ours ${JSON.stringify(ours[i].text)}\n  js   ${JSON.stringify(expected)}`);
  });
  console.log(`${file}: ${kept.length - differ}/${kept.length} id lists decode to equal text`);
  return differ;
}

// The tokenizer.json models attn-viz reads; a file of another model must be refused by name,
// never misread, and is reported as skipped.
const read_models = new Set(["BPE", "WordPiece", "Unigram"]);
let mismatches = 0, compared = 0;
// Each source: the file attn-viz reads (`ours`) and the tokenizer.json the package reads.
const sources = [...tokenizer_files(path.join(shared, "models")), ...gpt2_forms(), ...metaspace_form()]
  .map((file) => ({ ours: file, reference: file, decode: true }));
for (const { ours: file, reference: reference_file, decode } of [...sources, ...phi3_form()]) {
  const config_file = path.join(path.dirname(reference_file), "tokenizer_config.json");
  const config = fs.existsSync(config_file) ? JSON.parse(fs.readFileSync(config_file, "utf8")) : {};
  const reference_json = JSON.parse(fs.readFileSync(reference_file, "utf8"));
  const run = spawnSync(binary, ["tokenize", "--json", "--tokenizer", file, "--inputs", inputs], { encoding: "utf8", maxBuffer: 1 << 28 });
  const model_type = reference_json.model?.type;
  if (model_type && !read_models.has(model_type)) {
    if (run.status === 3 && run.stderr.includes(`unsupported model type "${model_type}"`)) {
      console.log(`skipped ${file}: attn-viz does not read ${model_type} tokenizers yet, and refuses this one by name`);
    } else {
      console.log(`FAIL ${file}: a ${model_type} tokenizer must be refused by name; attn-viz exited ${run.status}: ${run.stderr}`);
      ++mismatches;
    }
    continue;
  }
  const reference = new Tokenizer(reference_json, config);
  if (run.status !== 0) {
    console.log(`FAIL ${file}: attn-viz tokenize exited ${run.status}: ${run.stderr}`);
    ++mismatches;
    continue;
  }
  const ours = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  if (ours.length !== texts.length) {
    console.log(`FAIL ${file}: attn-viz printed ${ours.length} results for ${texts.length} texts`);
    ++mismatches;
    continue;
  }
  let file_mismatches = 0;
  texts.forEach((text, i) => {
    const expected = reference.encode(text);
    ++compared;
    if (JSON.stringify(expected.ids) === JSON.stringify(ours[i].ids)) return;
    ++file_mismatches;
    console.log(`MISMATCH ${file} text ${JSON.stringify(text)}\n  ours ${JSON.stringify(ours[i].ids)} ${JSON.stringify(ours[i].tokens)}\n` +
                `  js   ${JSON.stringify(expected.ids)} ${JSON.stringify(expected.tokens)}`);
  });
  console.log(`${file}: ${texts.length - file_mismatches}/${texts.length} texts give equal ids`);
  mismatches += file_mismatches;
  // The package's WordPiece decoder does not clean up on its own as the tokenizers library's does:
  // its decode is asked to where the folder does not say.
  const wordpiece_cleanup = reference_json.decoder?.type === "WordPiece" && reference_json.decoder.cleanup !== false;
  const decode_config = { ...config, clean_up_tokenization_spaces: config.clean_up_tokenization_spaces ?? wordpiece_cleanup };
  if (decode) mismatches += check_decoding(file, reference, decode_config, texts.map((text) => reference.encode(text).ids));
}
if (compared === 0) {
  console.log(`FAIL: no tokenizer.json under ${shared}/models`);
  process.exit(1);
}
console.log(mismatches === 0 ? `all ${compared} encodings (and decodings) equal` : `${mismatches} mismatches (seed ${seed})`);
process.exit(mismatches === 0 ? 0 : 1);
