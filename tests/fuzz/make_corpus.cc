// Writes the seed corpus for fuzz_codec (one file per seed) into the directory given as argv[1].
// Each seed is: one chunking byte + an encoded value / info array / frame.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../unit/sample_values.h"
#include "wire/codec.h"
#include "wire/frame.h"

using namespace pmixcpp;
using namespace pmixcpp::wire;

static void write_seed(const std::string &dir, const std::string &name, const std::vector<uint8_t> &bytes) {
    std::string path = dir + "/" + name;
    FILE *f = fopen(path.c_str(), "wb");
    if (!f) {
        perror(path.c_str());
        return;
    }
    uint8_t chunk = 3;
    fwrite(&chunk, 1, 1, f);
    fwrite(bytes.data(), 1, bytes.size(), f);
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    std::string dir = argv[1];
    const pmix_data_type_t seeds[] = {PMIX_STRING,   PMIX_PROC,    PMIX_DATA_ARRAY,
                                      PMIX_GEOMETRY, PMIX_REGATTR, PMIX_PROC_INFO};
    std::vector<pmix_info_t> infos(sizeof(seeds) / sizeof(seeds[0]));
    memset(infos.data(), 0, infos.size() * sizeof(pmix_info_t));
    for (size_t i = 0; i < infos.size(); ++i) {
        Value v;
        if (!testing::make_sample(seeds[i], v.get()).ok()) return 1;
        Writer w;
        if (!encode_value(w, *v.get()).ok()) return 1;
        write_seed(dir, "value-" + std::to_string(seeds[i]), w.data());
        snprintf(infos[i].key, sizeof(infos[i].key), "pmix.seed.%zu", i);
        if (!value_xfer(&infos[i].value, v.get()).ok()) return 1;
    }
    Writer w;
    if (!encode_info_array(w, infos.data(), infos.size()).ok()) return 1;
    write_seed(dir, "info-array", w.data());
    auto frame = encode_frame(7, 0, 42, w.data());
    if (!frame.ok()) return 1;
    write_seed(dir, "frame", frame.value());
    for (auto &info : infos) info_destruct(&info);
    return 0;
}
