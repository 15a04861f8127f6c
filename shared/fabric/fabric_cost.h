// The fabric cost matrix from a switch tree (Slurm's topology/tree), in plain C++: no Slurm, no
// hwloc, no I/O. The scheduler context (sched.cc) feeds it the switch records that libslurm
// reports and the network interfaces of delivered inventories; tests feed it parsed topology.conf.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::sched {

// One switch as Slurm reports it (topo_info_t): level 0 = leaf; `nodes` and `switches` are
// Slurm host lists of its direct descendants; link_speed 0 = not reported.
struct switch_record {
    std::string name;
    uint16_t level = 0;
    uint32_t link_speed = 0;
    std::string nodes;
    std::string switches;

    bool operator==(const switch_record &) const = default;
};

// Parse topology.conf text (SwitchName=.. [Switches=..] [Nodes=..] [LinkSpeed=..], '#' comments).
// Levels are computed as Slurm does: a switch with nodes is a leaf (0), otherwise one above its
// highest child. BAD_PARAM naming the line on a syntax error or an unknown child switch.
Result<std::vector<switch_record>> parse_topology_conf(const std::string &text);

// The nodes a slurm.conf defines: every NodeName= value (a host list; NodeName=DEFAULT skipped),
// expanded, in order of appearance, each once. Keys are case-insensitive, '#' starts a comment, a
// line ending in '\\' continues on the next. `Include` lines are not followed. BAD_PARAM naming the
// line on a host list that does not expand.
Result<std::vector<std::string>> parse_slurm_conf_nodes(const std::string &text);

// The switch records of a cluster without a switch topology (topology/none, no topology.conf):
// one leaf switch, kFlatSwitchName, holding every node, so the fabric is one vertex per node with
// a uniform cost (2, as between two nodes of one leaf switch). Empty for no nodes.
inline constexpr const char *kFlatSwitchName = "flat";
std::vector<switch_record> flat_topology(const std::vector<std::string> &nodes);

// A network interface of a node (from an inventory).
struct nic {
    std::string name;     // e.g. "eth0"
    std::string address;  // e.g. the MAC or first IP address; may be empty
};

// A vertex of the cost matrix: a node's network interface, or the node itself (device empty)
// when no interface of that node is known.
struct fabric_vertex {
    std::string node;
    std::string device;
    std::string address;
    std::string leaf;  // name of (the first) leaf switch of the node

    bool operator==(const fabric_vertex &) const = default;
};

inline constexpr uint16_t kCostUnreachable = 0xFFFF;  // no switch path (or node not in the tree)
inline constexpr uint16_t kCostMax = 0xFFFE;          // reachable costs saturate here

// The switch tree: node-to-node costs.
//
//   weight(link into switch S) = max(1, round(fastest / S.link_speed)), or 1 when S reports no
//                                speed (fastest = the highest link_speed in the topology)
//   cost(a, a) = 0
//   cost(a, b) = min over leaves La of a, Lb of b, common ancestors C of La and Lb of
//                weight(La) + up(La, C) + up(Lb, C) + weight(Lb)
//   up(L, C)   = sum of weight(P) over the switches P on the way from L up to C (excluding L)
//
// i.e. with equal speeds: 2 for two nodes on one leaf switch, 4 across one spine, 2 + 2k across
// k levels. No common ancestor: kCostUnreachable.
class switch_tree {
public:
    static Result<switch_tree> build(const std::vector<switch_record> &records);

    // Every node under some leaf, in order of first appearance (switch order, then host list).
    const std::vector<std::string> &nodes() const { return _nodes; }
    // The first leaf of a node ("" if the node is not in the tree).
    std::string leaf_of(const std::string &node) const;
    uint16_t node_cost(const std::string &a, const std::string &b) const;

private:
    std::vector<std::string> _nodes;
    std::map<std::string, std::vector<size_t>> _leaves_of_node;  // node -> switch indices
    std::vector<std::string> _switch_names;
    std::vector<uint32_t> _weight;                               // per switch
    std::vector<std::map<size_t, uint32_t>> _up;                 // per switch: ancestor -> up cost
};

// Square cost matrix (row-major, not assumed symmetric) over vertices.
struct cost_matrix {
    std::vector<fabric_vertex> vertices;
    std::vector<uint16_t> cost;

    size_t size() const { return vertices.size(); }
    uint16_t at(size_t i, size_t j) const { return cost[i * vertices.size() + j]; }
};

// Vertices: for each node of the tree (tree order), its NICs from `nics_by_node` in the given
// order, or the node itself if none are known. Two vertices of the same node cost 0.
cost_matrix build_cost_matrix(const switch_tree &tree,
                              const std::map<std::string, std::vector<nic>> &nics_by_node);

}  // namespace pmixcpp::sched
