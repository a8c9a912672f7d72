// Configuration of a sparse communicator: MPI_Info keys on MPIX_Sparse_comm_create, with defaults from
// environment variables of the same meaning. Parsing is strict: a value that does not parse is an
// error naming the key, never a silent default.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/cost_params.h"

namespace mpix::sparse::detail {

enum class AggregatorMode { Colocated, Dedicated };
enum class AlgorithmChoice { Auto, Aggregator, Allgather, Dense };
enum class Placement { Spread, Packed };
enum class Hierarchy { Auto, On, Off };
enum class ProgressThreadSetting { Auto, On, Off };
enum class TuneSetting { Auto, On, Off };
// A test hook (info key mpix_sparse_test_fail, on the ranks that should fail): where this rank
// injects a local failure into its streamed operations, to test that its peers learn of it.
//   scan: before the agreement (its error flag tells the others); contribution: a worker fails after
//   sending its first message; aggregate: an aggregator fails at its first contribution; result: a
//   worker fails at its first result; corrupt: a worker's first message has a malformed header;
//   throw: a worker's step throws an exception after its first message (exception safety);
//   connect: setting up the communicator's transport fails on this rank (its peers must fail too);
//   download: reading a device send buffer's non-zero blocks fails after the agreement.
// Test hooks (mpix_sparse_test_fail): a failure injected on this rank at one point of a call; Stop
// and Exit make the process raise SIGSTOP on itself or _exit(0) after its first contribution.
enum class FailPoint {
    None,
    Scan,
    Contribution,
    Aggregate,
    Result,
    Corrupt,
    Throw,
    Stop,
    Exit,
    Connect,
    StreamMemory,
    Download
};

struct Config {
    std::uint32_t block_elems = 256;
    int aggregators = 0;  // 0: default (all ranks when colocated, 1 when dedicated)
    AggregatorMode mode = AggregatorMode::Colocated;
    AlgorithmChoice algorithm = AlgorithmChoice::Auto;
    Placement placement = Placement::Spread;
    Hierarchy hierarchical = Hierarchy::Auto;
    // Results cross to another node once per aggregator and node, and a worker there forwards them to
    // its node's other workers (core/result_fanout.h); off: every worker gets them from the aggregator.
    bool node_multicast = true;
    std::uint64_t dense_below_bytes = 131072;
    // Tuning (environment only): payload bytes per streamed message and messages in flight per peer.
    std::size_t message_bytes = std::size_t{256} << 10;
    int window = 4;
    // Largest shared segment per communicator and rank, through which payloads to ranks of the same
    // machine travel by reference (transport/shared_segment.h); 0: off, everything goes through UCX.
    std::size_t shared_memory_bytes = std::size_t{1} << 30;
    CostParams cost;
    FailPoint fail_at = FailPoint::None;
    ProgressThreadSetting progress_thread = ProgressThreadSetting::Auto;
    // Seconds an operation may make no progress before it fails with MPIX_ERR_SPARSE_TIMEOUT and the
    // communicator is marked broken; 0: wait as long as it takes (MPI semantics).
    double timeout_s = 0;
    // Time each phase of every call (MPIX_Sparse_profile_get); off: no clock is read.
    bool profile = false;
    // Learn each algorithm's time from the communicator's own blocking calls and let it override the
    // cost model (core/call_tuner.h); auto: on for communicators that span nodes, where the model
    // knows the link's bandwidth from a probe but not its round trips or transport.
    TuneSetting tune = TuneSetting::Auto;
};

// One configurable setting: its MPI_Info key and environment variable.
struct SettingName {
    const char *info_key;
    const char *env_var;
};

// Returns the raw value of a setting, or nothing when it is not set.
using SettingLookup = std::function<std::optional<std::string>(const SettingName &)>;

// Applies every setting that `lookup` finds on top of `base`; throws Error(Info*) naming the key of
// the first value that does not parse.
Config apply_settings(Config base, const SettingLookup &lookup);

// Defaults for this process: built-in values overridden by the environment. Parsed once and cached;
// a bad environment value is reported on every call that needs the defaults.
const Config &environment_defaults();

// The environment defaults overridden by the keys present in `info` (MPI_INFO_NULL allowed).
Config config_from_info(MPI_Info info);

// A digest of the settings every rank of a communicator must share: those that decide which
// collectives a call posts or which algorithm it plans. Left out: what changes this rank alone (the
// progress thread, profiling, its shared memory, the test hook, how long a timeout is), and node
// multicast, which the ranks reconcile themselves (off where any rank has it off).
std::uint64_t shared_settings_digest(const Config &config);

// Settings are read by each rank, but a communicator's collectives follow them: ranks that read
// different values would post different collectives and hang or mix their data. Collective over comm
// (one allreduce): `read` gives this rank's settings; every rank throws if any rank's read failed
// (its own error there, RemoteArgument elsewhere) or if their digests differ (InfoMismatch).
Config agree_on_config(MPI_Comm comm, const std::function<Config()> &read);

}  // namespace mpix::sparse::detail
