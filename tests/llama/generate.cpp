// Greedy generation through llama.h, with every step's logits dumped, for
// scripts/test-llama.sh: the same prompt on llama.cpp's CPU backend and on the NPU
// backend must give the same tokens and near logits.
//
//   generate MODEL.gguf --prompt ID,ID,... --n N --backend cpu|npu [--threads T] > out.txt
//
// The prompt is token ids (so its length, hence the prompt matmuls' M, is exact) and
// is decoded as one batch; then N tokens one at a time. Output: one line per decode
// step, "step I token T logits L0 L1 ...", the token the step chose and the logits of
// the last position (%.6g). --backend cpu keeps the model off every device (CPU
// backend alone); npu lets llama.cpp use the devices it registered (ggml-rknn).
#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct options {
    const char * model = nullptr;
    std::vector<llama_token> prompt;
    int n_gen = 8;
    int threads = 2;
    bool npu = false;
};

bool parse_ids(const char * text, std::vector<llama_token> & out) {
    char * end = nullptr;
    for (const char * p = text; *p; p = *end == ',' ? end + 1 : end) {
        long id = strtol(p, &end, 10);
        if (end == p || (*end != ',' && *end != '\0')) {
            return false;
        }
        out.push_back((llama_token)id);
    }
    return !out.empty();
}

bool parse(int argc, char ** argv, options & o) {
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        const char * v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (strcmp(a, "--prompt") == 0 && v && parse_ids(v, o.prompt)) {
            i++;
        } else if (strcmp(a, "--n") == 0 && v) {
            o.n_gen = atoi(v), i++;
        } else if (strcmp(a, "--threads") == 0 && v) {
            o.threads = atoi(v), i++;
        } else if (strcmp(a, "--backend") == 0 && v && (!strcmp(v, "cpu") || !strcmp(v, "npu"))) {
            o.npu = strcmp(v, "npu") == 0, i++;
        } else if (a[0] != '-' && !o.model) {
            o.model = a;
        } else {
            return false;
        }
    }
    return o.model && !o.prompt.empty() && o.n_gen > 0 && o.threads > 0;
}

// Decodes `batch`, picks the argmax of the last position and prints the step.
bool step(llama_context * ctx, llama_batch batch, int index, int n_vocab, llama_token & chosen) {
    if (llama_decode(ctx, batch) != 0) {
        fprintf(stderr, "generate: llama_decode failed at step %d\n", index);
        return false;
    }
    const float * logits = llama_get_logits_ith(ctx, -1);
    chosen = 0;
    for (int t = 1; t < n_vocab; t++) {
        if (logits[t] > logits[chosen]) {
            chosen = t;
        }
    }
    printf("step %d token %d logits", index, chosen);
    for (int t = 0; t < n_vocab; t++) {
        printf(" %.6g", logits[t]);
    }
    printf("\n");
    return true;
}

} // namespace

int main(int argc, char ** argv) {
    options o;
    if (!parse(argc, argv, o)) {
        fprintf(stderr, "usage: generate MODEL.gguf --prompt ID,ID,... [--n N] --backend cpu|npu "
                        "[--threads T]\n");
        return 2;
    }
    ggml_backend_load_all();
    llama_model_params mp = llama_model_default_params();
    ggml_backend_dev_t no_devices[] = {nullptr};
    if (!o.npu) {
        mp.devices = no_devices;
        mp.n_gpu_layers = 0;
    }
    llama_model * model = llama_model_load_from_file(o.model, mp);
    if (!model) {
        fprintf(stderr, "generate: cannot load %s\n", o.model);
        return 1;
    }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)(o.prompt.size() + o.n_gen + 8);
    cp.n_batch = cp.n_ubatch = (uint32_t)o.prompt.size();
    cp.n_threads = cp.n_threads_batch = o.threads;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "generate: cannot create a context\n");
        return 1;
    }
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_token next = 0;
    bool ok = step(ctx, llama_batch_get_one(o.prompt.data(), (int32_t)o.prompt.size()), 0, n_vocab, next);
    for (int i = 1; ok && i <= o.n_gen; i++) {
        ok = step(ctx, llama_batch_get_one(&next, 1), i, n_vocab, next);
    }
    fflush(stdout);
    llama_free(ctx);
    llama_model_free(model);
    return ok ? 0 : 1;
}
