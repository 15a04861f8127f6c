#include "service_ids.h"

namespace pmixcpp::services {

namespace {

class catalog final : public agent::service_names {
public:
    const char *name_of(agent::service_id id) const override {
        switch (static_cast<service>(id)) {
        case service::alloc: return "allocation";
        case service::spawn: return "spawn";
        case service::spawn_watch: return "spawn watch";
        case service::session: return "job store";
        case service::connect: return "connect rendezvous";
        case service::fabric: return "fabric";
        case service::fabric_watch: return "fabric watch";
        case service::xstep: return "cross-step";
        }
        return nullptr;
    }
    // Lane 1: allocations (a grow may wait hours for Slurm); lane 2: cross-step calls (an inbox
    // waits for the whole step); lane 0: every other call (spawn, the job's store, fabric).
    unsigned lane_of(agent::service_id id) const override {
        switch (static_cast<service>(id)) {
        case service::alloc: return 1;
        case service::xstep: return 2;
        default: return 0;
        }
    }
};

}  // namespace

const agent::service_names &names() {
    static const catalog c;
    return c;
}

}  // namespace pmixcpp::services
