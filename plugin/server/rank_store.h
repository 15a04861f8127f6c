// The rank data that crosses nodes (a fence's contribution, a direct-modex answer), read from and
// written to the node's key-value store: which requester sees what, the encoding of ranks' data
// for other nodes, and the checked storing of what another node sent. No I/O; loop thread only.
//
// Direct modex (dmodex.h) reads and writes the store through this narrow interface alone, so a
// remote Get does not cross into the server's shell for its data; the remote-fence backend uses
// the same code for a fence's data.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kvs.h"
#include "status.h"
#include "wire/node_messages.h"

namespace pmixcpp::server {

// What direct modex needs of the store (the server's is kvs_rank_store; the tests and the
// simulator have their own).
class rank_data_store {
public:
    virtual ~rank_data_store() = default;
    // Whether `rank` holds `key` for `requester` (PMIX_RANK_UNDEF: another node); an empty key:
    // whether it committed anything.
    virtual bool has(uint32_t requester, uint32_t rank, const std::string &key) const = 0;
    // The data of `ranks` as other nodes see it, encoded as rank data (wire::encode_rank_data).
    virtual Result<std::vector<uint8_t>> encode(const std::vector<uint32_t> &ranks) const = 0;
    // Store what node `from` sent; every rank is checked to be hosted by `from` before anything is
    // stored. `ranks` gets the ranks stored.
    virtual Status store(uint32_t from, const std::vector<wire::rank_data_entry> &entries,
                         std::vector<uint32_t> *ranks) = 0;
};

// The key-value store of the server, with the step's placement of ranks on nodes.
class kvs_rank_store final : public rank_data_store {
public:
    kvs_rank_store(kv_store &kvs, std::vector<uint32_t> node_of) : _kvs(kvs), _node_of(std::move(node_of)) {}

    // The relation of `requester` to `target` for the store's scope rules (kvs.h).
    relation relation_of(uint32_t requester, uint32_t target) const;

    bool has(uint32_t requester, uint32_t rank, const std::string &key) const override;
    Result<std::vector<uint8_t>> encode(const std::vector<uint32_t> &ranks) const override { return encode(ranks, 0); }
    // since > 0: only what was committed after that generation of the store.
    Result<std::vector<uint8_t>> encode(const std::vector<uint32_t> &ranks, uint64_t since) const;
    Status store(uint32_t from, const std::vector<wire::rank_data_entry> &entries, std::vector<uint32_t> *ranks) override;
    // A fence's data, as the collective delivered it: decoded once, and the decoded values go
    // into the store as they are.
    Status store_encoded(uint32_t from, std::span<const uint8_t> bytes, std::vector<uint32_t> *ranks);

private:
    // Every rank hosted by `from`: a bad message leaves no trace.
    Status check(uint32_t from, const std::vector<wire::rank_data_entry> &entries) const;

    kv_store &_kvs;
    std::vector<uint32_t> _node_of;  // by rank
};

}  // namespace pmixcpp::server
