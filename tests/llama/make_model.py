#!/usr/bin/python3
"""Writes a small random-weight Llama GGUF with a llama.cpp tree's own gguf-py.

    make_model.py LLAMA_CPP_DIR OUT.gguf [--layers 2] [--vocab 512] [--seed 1]

Llama-3.2-1B widths (hidden 2048, ffn 8192, 32 heads, 8 KV heads of 64) with a few
layers and a small SentencePiece-style vocabulary: <unk>, <s>, </s>, the 256 byte
tokens (so any text tokenizes) and pieces up to the vocabulary size. 2-D weights are
fp16 (what the ggml-rknn backend offloads), norms fp32. The output projection is drawn
wider than the rest so that greedy choices are not near-ties.
"""
import argparse
import sys

import numpy as np


def vocabulary(size):
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [2, 3, 3] + [6] * 256  # unknown, control, byte (gguf.TokenType)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    pieces = ["\u2581" + c for c in letters] + list(letters)
    pieces += ["\u2581" + a + b for a in "etaoinshrdlu" for b in "etaoinshrdlucmfwy"]
    if len(tokens) + len(pieces) < size:
        sys.exit("make_model.py: a vocabulary of %d needs more pieces than are written" % size)
    pieces = pieces[: size - len(tokens)]
    scores = [0.0] * len(tokens) + [-float(i) for i in range(len(pieces))]
    return tokens + pieces, scores, types + [1] * len(pieces)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("llama_cpp_dir")
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    sys.path.insert(0, args.llama_cpp_dir + "/gguf-py")
    import gguf

    embd, ff, heads, heads_kv, head_dim = 2048, 8192, 32, 8, 64
    rng = np.random.default_rng(args.seed)

    def weight(rows, cols, std=0.02):  # ggml's ne = [cols, rows]: rows outputs of cols inputs
        return (rng.standard_normal((rows, cols), dtype=np.float32) * std).astype(np.float16)

    w = gguf.GGUFWriter(args.out, "llama")
    w.add_name("rknn-bench random llama")
    w.add_context_length(2048)
    w.add_embedding_length(embd)
    w.add_block_count(args.layers)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(heads_kv)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(500000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_vocab_size(args.vocab)

    tokens, scores, types = vocabulary(args.vocab)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    norm = np.ones(embd, dtype=np.float32)
    w.add_tensor("token_embd.weight", weight(args.vocab, embd, 1.0))
    for i in range(args.layers):
        b = "blk.%d." % i
        w.add_tensor(b + "attn_norm.weight", norm)
        w.add_tensor(b + "attn_q.weight", weight(heads * head_dim, embd))
        w.add_tensor(b + "attn_k.weight", weight(heads_kv * head_dim, embd))
        w.add_tensor(b + "attn_v.weight", weight(heads_kv * head_dim, embd))
        w.add_tensor(b + "attn_output.weight", weight(embd, heads * head_dim))
        w.add_tensor(b + "ffn_norm.weight", norm)
        w.add_tensor(b + "ffn_gate.weight", weight(ff, embd))
        w.add_tensor(b + "ffn_up.weight", weight(ff, embd))
        w.add_tensor(b + "ffn_down.weight", weight(embd, ff))
    w.add_tensor("output_norm.weight", norm)
    w.add_tensor("output.weight", weight(args.vocab, embd, 0.1))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
