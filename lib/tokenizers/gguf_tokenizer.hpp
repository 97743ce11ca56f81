// Tokenizers from a GGUF file's metadata, as llama.cpp's converter writes them: SentencePiece
// (tokenizer.ggml.model "llama": Llama 2, TinyStories) as llama2.c's encoder takes it, byte-level
// BPE ("gpt2": GPT-2, Llama 3, Qwen2, ...) and WordPiece ("bert": BERT, BGE, MiniLM, ...)
// translated back to the tokenizer.json pipeline HfTokenizer runs, so GGUF files and Hugging Face
// folders share one encoder.
#pragma once

#include <cstdint>
#include <string>

#include "gguf.hpp"
#include "hf_tokenizer.hpp"
#include "llama2c_tokenizer.hpp"

namespace attn_viz {

// tokenizer.ggml.model "gpt2": tokenizer.ggml.tokens (in GPT-2's byte-level alphabet), .merges
// ("a b" in rank order), .token_type (control and user-defined tokens are cut out of the text
// before BPE, as HF's added tokens), .pre (the pre-tokenizer: supported_gguf_pre_tokenizers();
// absent means "default", as in llama.cpp), .bos_token_id / .eos_token_id / .unknown_token_id,
// .add_bos_token / .add_eos_token (defaults as llama.cpp's: BOS added for the Llama 3 family only).
// Everything is checked (the token types' count and values, ids in range, no token twice, every
// merge of two known tokens whose concatenation is a token, the token count equal to `vocab_size`
// > 0, or with 0 to the rows of the file's token_embd.weight if it has one): Error(bad_input)
// naming the file and the key.
HfTokenizer read_gguf_bpe_tokenizer(const GgufFile& file, int64_t vocab_size);

// tokenizer.ggml.model "bert": tokenizer.ggml.tokens in llama.cpp's spelling (word-initial pieces
// behind a "▁", continuations without their "##", control tokens and "[...]" as they are), turned
// back into vocab.txt's; .token_type as for "gpt2"; .unknown_token_id, and .cls_token_id with
// .seperator_token_id (llama.cpp's spelling) for the [CLS] ... [SEP] around an encoded text. Text
// is lowercased and accents stripped (BertNormalizer), as llama.cpp's WordPiece always does. The
// same checks as read_gguf_bpe_tokenizer, the twin check on the translated tokens.
HfTokenizer read_gguf_wordpiece_tokenizer(const GgufFile& file, int64_t vocab_size);

// tokenizer.ggml.model "llama": tokens ("\u2581" for space) and scores; .bos_token_id and
// .eos_token_id (defaults 1 and 2), .add_bos_token and .add_space_prefix (defaults true), as
// llama.cpp reads them: Gemma's vocabulary has BOS 2, EOS 1 and no space prefix. Byte fallback
// takes the "<0xNN>" tokens wherever they are. Other tokenizer models are refused by name ("gpt2" byte-level BPE:
// read_gguf_bpe_tokenizer). `vocab_size` > 0 must be the token count; 0
// checks it against the file's token_embd.weight, if any (a vocabulary-only GGUF file has no tensors).
Llama2cTokenizer read_gguf_llama_tokenizer(const GgufFile& file, int64_t vocab_size);

// The tokenizer.ggml.pre names read_gguf_bpe_tokenizer knows, for messages and docs.
std::string supported_gguf_pre_tokenizers();

}  // namespace attn_viz
