// A cost matrix as result infos: how srun's agent hands the step's fabric to the node servers and
// their clients (PMIx_Fabric_register / _update in an application process). Plain values, no I/O;
// built into the plugin (encoding) and the client library (decoding).
#pragma once

#include <pmix_common.h>

#include <span>
#include <string>

#include "fabric_cost.h"
#include "status.h"
#include "value.h"
#include "wire/codec.h"

// The key of the vertex count: the PMIx standard's PMIX_FABRIC_NUM_VERTICES, whose string
// ("pmix.fab.nverts") OpenPMIx 4.2.2's pmix_common.h names PMIX_FABRIC_NUM_DEVICES (shared/pmix;
// shared/ includes no header of client/include, docs/architecture.md "Layers").
#ifndef PMIX_FABRIC_NUM_VERTICES
#define PMIX_FABRIC_NUM_VERTICES PMIX_FABRIC_NUM_DEVICES
#endif

// Result keys besides PMIX_FABRIC_PLANE and PMIX_FABRIC_NUM_VERTICES.
#define PMIXCPP_FABRIC_NODES  "pmixcpp.fab.nodes"   /* string: vertex nodes, comma-separated, vertex order */
#define PMIXCPP_FABRIC_LEAVES "pmixcpp.fab.leaves"  /* string: each vertex's leaf switch, comma-separated */
#define PMIXCPP_FABRIC_COSTS  "pmixcpp.fab.costs"   /* byte object: n*n uint16, little-endian, row-major */

namespace pmixcpp::sched {

// PMIx_Fabric_register / _update from a client to its server (msg_type::fabric), and from the
// server on to srun's side: u8 op, str plane (empty = "default").
enum class fabric_op : uint8_t { registration = 1, update = 2 };
struct fabric_request {
    fabric_op op = fabric_op::registration;
    std::string plane;
};
Status encode_client_request(wire::Writer &w, const fabric_request &r);
Status decode_client_request(std::span<const uint8_t> payload, fabric_request *r);

// The largest matrix carried (vertices): 4096^2 * 2 bytes = 32 MiB.
inline constexpr size_t kFabricMaxVertices = 4096;

// PMIX_FABRIC_PLANE, PMIX_FABRIC_NUM_VERTICES, PMIXCPP_FABRIC_NODES, _LEAVES, _COSTS.
Result<InfoArray> matrix_to_results(const cost_matrix &m, const std::string &plane);

// The inverse; checks that every piece is there, has the right type and that the sizes agree
// (PMIX_ERR_UNPACK_FAILURE naming what is wrong).
Status matrix_from_results(const pmix_info_t *info, size_t n, cost_matrix *m, std::string *plane);

}  // namespace pmixcpp::sched
