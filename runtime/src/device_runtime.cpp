#include <apiary/cuda_check.hpp>
#include <apiary/device_buffer.hpp>
#include <apiary/device_runtime.hpp>
#include <apiary/error.hpp>

#include <apiary/host_input.hpp>

#include <boost/lockfree/queue.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>
#include <thread>

namespace apiary {

namespace {

using Clock = std::chrono::steady_clock;

template <class T>
void to_host(T* dst, const T* src, std::size_t count = 1) {
  APIARY_CUDA_CHECK(cudaMemcpy(dst, src, count * sizeof(T), cudaMemcpyDeviceToHost));
}

std::string describe_capacity_key(const QueueLayout& q) {
  return q.capacity_key.empty() ? std::string("queue_capacity") : q.capacity_key;
}

}  // namespace

DeviceInfo query_device(int ordinal) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw CudaError(std::string("no CUDA device is available (") +
                    (status == cudaSuccess ? "cudaGetDeviceCount found 0 devices" : cudaGetErrorString(status)) +
                    "): apiary runs task graphs on an NVIDIA GPU (built for sm_90a: H100/H200)");
  if (ordinal < 0 || ordinal >= count)
    throw InputError("device", "device " + std::to_string(ordinal) + " does not exist; this machine has " +
                                   std::to_string(count) + " CUDA device(s)");
  cudaDeviceProp prop{};
  APIARY_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.sm_count = static_cast<std::uint32_t>(prop.multiProcessorCount);
  info.max_shared_per_block = static_cast<std::uint32_t>(prop.sharedMemPerBlockOptin);
  info.max_threads_per_sm = static_cast<std::uint32_t>(prop.maxThreadsPerMultiProcessor);
  info.max_shared_per_sm = static_cast<std::uint32_t>(prop.sharedMemPerMultiprocessor);
  info.reserved_shared_per_block = static_cast<std::uint32_t>(prop.reservedSharedMemPerBlock);
  return info;
}

struct DeviceRuntime::Buffers {
  DeviceBuffer<RunState> state;
  DeviceBuffer<QueueCounters> queue_counters;
  std::vector<DeviceBuffer<std::uint64_t>> seq, tags, items;  // items as 8-byte words
  DeviceBuffer<std::uint32_t> ws_state, ws_queue;
  DeviceBuffer<std::uint64_t> ws_tags, ws_items;
  DeviceBuffer<WaitingStorageCounters> ws_counters;
  std::uint32_t ws_stride = 0;
  DeviceBuffer<Dependency> deps;
  DeviceBuffer<std::uint32_t> dep_next;
  DeviceBuffer<TaskRecord> records;
  DeviceBuffer<DependencyEvent> events;
  DeviceBuffer<TraceCursors> cursors;
  DeviceBuffer<RunSummary> summary;
  DeviceBuffer<StagedCopy> copy_list;  // the start kernel's copies, when too many for its parameters
  std::uint64_t* pinned = nullptr;  // [0] progress read-back, [1] status to write
  bool failed = false;
};

// Mapped pinned memory through which a run's start and end pass without a copy of their own
// (run_bookkeeping.hpp): the arena holds what the start kernel copies to the device (small
// seeds, the queue counters, the list of copies; write-combined: the host only writes it), the
// summary what the end kernel leaves for the host. The arena is emptied once the start kernel
// that reads it is queued: the next seeds come after the run, which waits for that kernel.
struct DeviceRuntime::Staging {
  struct Pending {
    void* to;
    std::size_t offset;  // in the arena
    std::size_t words;
  };
  Staging() {
    APIARY_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&summary), sizeof(RunSummary), cudaHostAllocMapped));
    APIARY_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&summary_device), summary, 0));
    reserve(std::size_t(64) << 10);
  }
  ~Staging() {
    if (summary) cudaFreeHost(summary);
    if (arena) cudaFreeHost(arena);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // Room for `bytes` more, keeping what is staged (its copies have not run yet).
  void reserve(std::size_t bytes) {
    if (arena && used + bytes <= capacity) return;
    const std::size_t grown = std::max(used + bytes, 2 * capacity);
    std::byte* bigger = nullptr;
    APIARY_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&bigger), grown,
                                    cudaHostAllocMapped | cudaHostAllocWriteCombined));
    if (used) std::memcpy(bigger, arena, used);
    if (arena) APIARY_CUDA_CHECK(cudaFreeHost(arena));
    arena = bigger;
    APIARY_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&arena_device), arena, 0));
    capacity = grown;
  }
  // Copies `bytes` into the arena (16-byte aligned); returns their offset.
  std::size_t stage(const void* host, std::size_t bytes) {
    const std::size_t aligned = (bytes + 15) / 16 * 16;
    reserve(aligned);
    const std::size_t offset = used;
    std::memcpy(arena + offset, host, bytes);
    used += aligned;
    return offset;
  }
  // The start kernel's copies, wide ones first, with the arena's device addresses now (it may
  // have moved since they were staged).
  std::vector<StagedCopy> copy_list() const {
    std::vector<StagedCopy> list;
    list.reserve(pending.size());
    for (const bool wide : {true, false})
      for (const Pending& p : pending) {
        if ((p.words >= wide_copy_words) != wide) continue;
        const auto* from = reinterpret_cast<const std::uint64_t*>(arena_device + p.offset);
        list.push_back(StagedCopy{static_cast<std::uint64_t*>(p.to), from, p.words});
      }
    return list;
  }
  void clear() {
    used = 0;
    pending.clear();
  }

  RunSummary* summary = nullptr;
  RunSummary* summary_device = nullptr;
  std::byte* arena = nullptr;
  std::byte* arena_device = nullptr;
  std::size_t capacity = 0, used = 0;
  std::vector<Pending> pending;
};

// Host task injection: the lock-free inbox every submitting thread pushes to, and the mailbox
// in mapped host memory that the device drains.
struct DeviceRuntime::HostInput {
  explicit HostInput(std::uint32_t capacity) : inbox(capacity), capacity(capacity) {
    const std::size_t bytes = sizeof(HostMailbox) + sizeof(HostTask) * capacity;
    APIARY_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&mailbox), bytes, cudaHostAllocMapped));
    std::memset(static_cast<void*>(mailbox), 0, bytes);
    mailbox->capacity = capacity;
    APIARY_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_mailbox), mailbox, 0));
  }
  ~HostInput() { cudaFreeHost(mailbox); }
  boost::lockfree::queue<HostTask> inbox;
  std::uint32_t capacity;
  HostMailbox* mailbox = nullptr;         // host view
  HostMailbox* device_mailbox = nullptr;  // device view of the same memory
  std::atomic<bool> open{false};
  std::atomic<bool> closing{false};       // close requested; mailbox->closed follows once drained
};

DeviceRuntime::DeviceRuntime(PhaseTable table, Config config, std::uint32_t max_item_bytes, RunBookkeeping bookkeeping)
    : table_(std::move(table)), config_(std::move(config)), max_item_bytes_(max_item_bytes), bookkeeping_(bookkeeping),
      buffers_(std::make_unique<Buffers>()), counters_(table_.num_queues(), QueueCounters{}) {
  if (!bookkeeping_.start || !bookkeeping_.summarize || !bookkeeping_.start_kernel || !bookkeeping_.summarize_kernel)
    throw Error("DeviceRuntime needs the run's bookkeeping kernels (run_bookkeeping.cuh: run_bookkeeping())");
  device_ = query_device(config_.device);
  APIARY_CUDA_CHECK(cudaSetDevice(device_.ordinal));
  if (table_.max_item_size() > max_item_bytes_)
    throw InputError("task graph", "a queue's item size exceeds the largest compiled work item");
  allocate();
  // A blocking stream: a run is ordered after the caller's earlier work on the legacy default
  // stream (its input, cudaMemset, the zeroed buffers above) without a host wait. The monitor's
  // copies must overtake a running kernel, so its stream does not block.
  APIARY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamDefault));
  APIARY_CUDA_CHECK(cudaStreamCreateWithFlags(&monitor_, cudaStreamNonBlocking));
  APIARY_CUDA_CHECK(cudaEventCreate(&start_));
  APIARY_CUDA_CHECK(cudaEventCreate(&stop_));
  APIARY_CUDA_CHECK(cudaEventCreateWithFlags(&summary_done_, cudaEventDisableTiming));
  staging_ = std::make_unique<Staging>();
}

DeviceRuntime::~DeviceRuntime() {
  if (kernel_hung_) {  // the device is stuck; freeing would block forever
    (void)new std::shared_ptr<void>(std::move(kept_));
    (void)run_graph_.release();
    return;
  }
  if (stream_) cudaStreamSynchronize(stream_);
  if (buffers_ && buffers_->pinned) cudaFreeHost(buffers_->pinned);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (summary_done_) cudaEventDestroy(summary_done_);
  if (stream_) cudaStreamDestroy(stream_);
  if (monitor_) cudaStreamDestroy(monitor_);
}

void DeviceRuntime::allocate() {
  Buffers& b = *buffers_;
  b.state = DeviceBuffer<RunState>(1);
  const std::uint32_t n = table_.num_queues();
  b.queue_counters = DeviceBuffer<QueueCounters>(n);
  for (std::uint32_t q = 0; q < n; ++q) {
    const QueueLayout& layout = table_.queues()[q];
    const std::uint64_t cap = queue_ring_capacity(layout.capacity);
    b.seq.emplace_back(cap);
    b.items.emplace_back(cap * queue_stride(layout.item_size) / 8, false);
    b.tags.emplace_back(config_.trace ? cap : 0);
  }
  const std::uint32_t ws_cap = waiting_slots();
  b.ws_stride = queue_stride(max_item_bytes_);
  b.ws_state = DeviceBuffer<std::uint32_t>(ws_cap);
  b.ws_queue = DeviceBuffer<std::uint32_t>(ws_cap);
  b.ws_tags = DeviceBuffer<std::uint64_t>(config_.trace ? ws_cap : 0);
  b.ws_items = DeviceBuffer<std::uint64_t>(std::size_t(ws_cap) * b.ws_stride / 8, false);
  b.ws_counters = DeviceBuffer<WaitingStorageCounters>(1);
  b.deps = DeviceBuffer<Dependency>(dependency_limit());
  b.dep_next = DeviceBuffer<std::uint32_t>(1);
  if (config_.trace) {
    b.records = DeviceBuffer<TaskRecord>(config_.trace_capacity, false);
    b.events = DeviceBuffer<DependencyEvent>(config_.trace_event_capacity, false);
  }
  b.cursors = DeviceBuffer<TraceCursors>(1);
  b.summary = DeviceBuffer<RunSummary>(1);
  APIARY_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&b.pinned), 4 * sizeof(std::uint64_t)));
}

Dependency* DeviceRuntime::dependency_pool() const { return buffers_->deps.get(); }

// The configured capacity plus what megakernel blocks may take and not hand out
// (dependency_pool.hpp), so that every scheduler runs any graph that allocates at most the
// configured capacity.
std::uint32_t DeviceRuntime::dependency_limit() const {
  const std::uint64_t limit = std::uint64_t(config_.dependency_capacity) + DependencyPool::slack(device_.sm_count);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(limit, 0xffffffffu));
}

// The configured capacity plus a slot per thread the device holds, for slots read and not yet
// freed (waiting_storage.hpp), so that every run that parks at most the configured capacity
// at once finds a slot.
std::uint32_t DeviceRuntime::waiting_slots() const {
  const std::uint64_t slots = std::uint64_t(config_.waiting_storage_capacity) +
                              WaitingStorageView::slack(device_.sm_count, device_.max_threads_per_sm);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(slots, 0xffffffffu));
}

void DeviceRuntime::open_host_input() {
  if (!input_) input_ = std::make_unique<HostInput>(config_.host_input_capacity);
  HostMailbox& m = *input_->mailbox;
  std::atomic_ref<std::uint64_t>(m.posted).store(0);
  std::atomic_ref<std::uint64_t>(m.taken).store(0);
  std::atomic_ref<std::uint64_t>(m.closed).store(0);
  input_->closing = false;
  input_->open = true;
}

void DeviceRuntime::submit(std::uint32_t queue, const void* item, std::size_t bytes) {
  if (!input_ || !input_->open || input_->closing)
    throw InputError("submit", "host input is not open: call open_host_input() before run() and submit before "
                               "close_host_input()");
  if (queue >= table_.num_queues()) throw InputError("submit", "queue index " + std::to_string(queue) + " out of range");
  const QueueLayout& layout = table_.queues()[queue];
  if (bytes != layout.item_size || bytes > max_injected_item_bytes)
    throw InputError("submit", "task type '" + layout.name + "': items of " + std::to_string(bytes) +
                                   " bytes cannot be submitted (expected " + std::to_string(layout.item_size) +
                                   ", at most " + std::to_string(max_injected_item_bytes) + ")");
  HostTask task{};
  task.queue = queue;
  task.bytes = static_cast<std::uint32_t>(bytes);
  std::memcpy(task.words, item, bytes);
  if (!input_->inbox.bounded_push(task))
    throw CapacityError("host input is full: " + std::to_string(input_->capacity) +
                        " submitted tasks wait to reach the device. Raise the config key 'host_input_capacity'.");
}

void DeviceRuntime::close_host_input() {
  if (input_) input_->closing = true;
}

void DeviceRuntime::drain_host_input() {
  if (!input_ || !input_->open) return;
  HostMailbox& m = *input_->mailbox;
  std::atomic_ref<std::uint64_t> posted(m.posted), taken(m.taken);
  // Read `closing` before draining: every submit that happened before close is in the inbox.
  const bool closing = input_->closing.load(std::memory_order_acquire);
  std::uint64_t p = posted.load(std::memory_order_relaxed);
  HostTask task;
  while (p - taken.load(std::memory_order_acquire) < input_->capacity && input_->inbox.pop(task)) {
    m.slots[p % input_->capacity] = task;
    posted.store(++p, std::memory_order_release);
  }
  if (closing && input_->inbox.empty()) {
    std::atomic_ref<std::uint64_t>(m.closed).store(1, std::memory_order_release);
    input_->open = false;
  }
}

void DeviceRuntime::seed(std::uint32_t queue, const void* items, std::size_t count, std::size_t item_size) {
  if (queue >= table_.num_queues()) throw InputError("seed", "queue index " + std::to_string(queue) + " out of range");
  const QueueLayout& layout = table_.queues()[queue];
  if (item_size != layout.item_size)
    throw InputError("seed", "item size " + std::to_string(item_size) + " does not match task type '" + layout.name +
                                 "' (" + std::to_string(layout.item_size) + " bytes)");
  if (count == 0) return;
  Buffers& b = *buffers_;
  QueueCounters& counters = counters_[queue];
  const std::uint64_t cap = queue_ring_capacity(layout.capacity);
  const std::uint64_t outstanding = counters.tail - counters.head;
  if (outstanding + count > cap)
    throw CapacityError("queue '" + layout.name + "' cannot take " + std::to_string(count) + " seeded tasks: capacity " +
                        std::to_string(cap) + ", " + std::to_string(outstanding) +
                        " already queued. Raise the config key '" + describe_capacity_key(layout) + "'.");
  const std::uint32_t stride = queue_stride(layout.item_size);
  std::vector<std::uint64_t> words(count * stride / 8, 0);
  std::vector<std::uint64_t> seq(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(reinterpret_cast<std::byte*>(words.data()) + i * stride,
                static_cast<const std::byte*>(items) + i * item_size, item_size);
    const std::uint64_t ticket = counters.tail + i;
    seq[i] = (ticket & ~(cap - 1)) + 1;  // published (queue.hpp)
  }
  // The tickets may wrap around the ring: copy in up to two contiguous pieces.
  std::size_t done = 0;
  while (done < count) {
    const std::uint64_t slot = (counters.tail + done) & (cap - 1);
    const std::size_t piece = std::min<std::size_t>(count - done, cap - slot);
    upload(b.items[queue].get() + slot * stride / 8, words.data() + done * stride / 8, piece * stride);
    upload(b.seq[queue].get() + slot, seq.data() + done, piece * sizeof(std::uint64_t));
    done += piece;
  }
  counters.tail += count;
  counters.available += std::int64_t(count);  // staged for the device when the run starts
}

// Small pieces wait in the staging arena for the start kernel: a DMA copy of its own would
// cost each a command and a transfer's latency. Large ones are copied now, on stream_, and
// waited for: the caller's memory may go when seed() returns, and the wait is short next to
// building a seed this size.
void DeviceRuntime::upload(void* device, const void* host, std::size_t bytes) {
  constexpr std::size_t staged_up_to = std::size_t(64) << 10;
  if (bytes > staged_up_to) {
    APIARY_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_));
    APIARY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  Staging& st = *staging_;
  st.pending.push_back(Staging::Pending{device, st.stage(host, bytes), bytes / 8});  // whole words (queue.hpp)
}

void DeviceRuntime::fill_before_run(void* device, std::uint64_t pattern, std::uint32_t element_bytes,
                                    std::size_t count) {
  if (element_bytes != 4 && element_bytes != 8)
    throw InputError("fill_before_run", "elements of " + std::to_string(element_bytes) +
                                            " bytes cannot be filled; use 4- or 8-byte elements");
  if (count == 0) return;
  if (device == nullptr || reinterpret_cast<std::uintptr_t>(device) % element_bytes != 0)
    throw InputError("fill_before_run", "the device address must be non-null and aligned to the " +
                                            std::to_string(element_bytes) + "-byte elements");
  if (fills_.size() >= max_fills)
    throw CapacityError("fill_before_run: a run's start kernel makes at most " + std::to_string(max_fills) +
                        " fills; fill adjacent buffers as one region, or reset the rest with a kernel of your own on "
                        "stream() before run()");
  fills_.push_back(StagedFill{device, pattern, count, element_bytes});
}

void DeviceRuntime::copy_before_run(void* device, const void* host, std::size_t bytes) {
  if (bytes == 0) return;
  if (device == nullptr || host == nullptr || bytes % 8 != 0 || reinterpret_cast<std::uintptr_t>(device) % 8 != 0)
    throw InputError("copy_before_run", "the start kernel copies whole 8-byte words: the device address must be "
                                        "8-byte aligned and the size (" + std::to_string(bytes) +
                                        " bytes) a multiple of 8");
  upload(device, host, bytes);
}

void DeviceRuntime::copy_at_end(const void* device, std::size_t bytes) {
  if (bytes > end_copy_limit)
    throw InputError("copy_at_end", "a run's end copies at most " + std::to_string(end_copy_limit) + " bytes; " +
                                        std::to_string(bytes) + " were asked for (copy a smaller struct, or copy the "
                                        "rest after the run)");
  if (bytes > 0 && device == nullptr) throw InputError("copy_at_end", "no device memory to copy (nullptr)");
  end_copy_from_ = bytes ? device : nullptr;
  end_copy_bytes_ = static_cast<std::uint32_t>(bytes);
}

const std::byte* DeviceRuntime::copied_at_end() const { return staging_->summary->end_copy; }

DeviceGraph DeviceRuntime::begin_run() {
  prepare_run();
  bookkeeping_.start(run_start(), start_grid_limit(), stream_);
  APIARY_CUDA_CHECK(cudaGetLastError());
  start_queued();
  APIARY_CUDA_CHECK(cudaEventRecord(start_, stream_));
  return view();
}

void DeviceRuntime::run_in_graph(const KernelLaunch& scheduler) {
  prepare_run();
  const RunStart start = run_start();
  const RunEnd end = run_end();
  const KernelLaunch start_launch{bookkeeping_.start_kernel, start_blocks(start, start_grid_limit()),
                                  bookkeeping_threads, 0, &start, sizeof(start)};
  const KernelLaunch end_launch{bookkeeping_.summarize_kernel, summarize_blocks(end, end_grid_limit()),
                                bookkeeping_threads, 0, &end, sizeof(end), -1, /*waits_for_previous=*/true};
  if (!run_graph_) run_graph_ = std::make_unique<RunGraph>(start_, stop_, summary_done_);
  run_graph_->launch(start_launch, scheduler, end_launch, stream_);
  start_queued();
  summarized_ = true;
  wait(summary_done_);
}

// What every run starts with on the host: no earlier failure, the watchdog and counts cleared.
void DeviceRuntime::prepare_run() {
  if (buffers_->failed)
    throw Error("a previous run of this runtime failed and left its device structures inconsistent; "
                "create a new Runtime to run again");
  watchdog_fired_ = false;
  summarized_ = false;
  rounds_ = launches_ = 0;
}

DeviceGraph DeviceRuntime::view() const {
  const Buffers& b = *buffers_;
  DeviceGraph g{};
  for (std::uint32_t q = 0; q < table_.num_queues(); ++q) {
    const QueueLayout& layout = table_.queues()[q];
    QueueView& v = g.queues[q];
    v.counters = b.queue_counters.get() + q;
    v.seq = b.seq[q].get();
    v.items = reinterpret_cast<std::byte*>(b.items[q].get());
    v.tags = config_.trace ? b.tags[q].get() : nullptr;
    v.mask = queue_ring_capacity(layout.capacity) - 1;
    v.stride = queue_stride(layout.item_size);
    v.index = q;
    v.error = &b.state.get()->error;
  }
  g.table = table_.view();
  g.state = b.state.get();
  g.waiting.state = b.ws_state.get();
  g.waiting.queue_of = b.ws_queue.get();
  g.waiting.tag_of = config_.trace ? b.ws_tags.get() : nullptr;
  g.waiting.items = reinterpret_cast<std::byte*>(b.ws_items.get());
  g.waiting.counters = b.ws_counters.get();
  g.waiting.capacity = waiting_slots();
  g.waiting.stride = b.ws_stride;
  g.waiting.error = &b.state.get()->error;
  g.pool = DependencyPool{b.deps.get(), b.dep_next.get(), config_.dependency_capacity, dependency_limit()};
  if (config_.trace) {
    g.trace = TraceWriter{b.records.get(), b.events.get(), b.cursors.get(), config_.trace_capacity,
                          config_.trace_event_capacity};
  }
  g.user_data = user_data_;
  if (input_ && input_->open) g.mailbox = input_->device_mailbox;
  return g;
}

// The start kernel's input: the run state as the seeds leave it (the pending counts per
// phase, the first phase with work), the pool, the cursors and the executed counts to reset,
// and what the staging arena holds for the device.
RunStart DeviceRuntime::run_start() {
  Buffers& b = *buffers_;
  const std::uint32_t n = table_.num_queues();
  RunStart start;
  const PhaseTableView view = table_.view();
  for (std::uint32_t q = 0; q < n; ++q) {
    const std::uint64_t queued = counters_[q].tail - counters_[q].head;
    start.pending[view.pending_slot(q)] += queued;
    start.pending_total += queued;
    counters_[q].executed = 0;
  }
  start.phase_word = PhaseWord{first_phase_with_work(view, start.pending), 0}.pack();
  start.host_open = input_ && input_->open ? 1 : 0;
  start.state = b.state.get();
  // Every queue's counters once (the seeds advanced them here; executed restarts at 0).
  upload(b.queue_counters.get(), counters_.data(), n * sizeof(QueueCounters));
  start.copies = copy_list();
  start.fills.count = static_cast<std::uint32_t>(fills_.size());
  std::copy(fills_.begin(), fills_.end(), start.fills.entries);
  start.pool = b.deps.get();
  start.pool_entries = dependency_limit();
  start.pool_next = b.dep_next.get();
  start.cursors = b.cursors.get();
  start.summary = b.summary.get();
  return start;
}

// The next seeds may reuse the arena: they come after this run, whose end waits for the start
// kernel.
void DeviceRuntime::start_queued() {
  staging_->clear();
  fills_.clear();
}

// Called between a run's start kernel and the scheduler's launch, on the host's critical path
// of a short run: plain concatenation, no stream (and its locale) per run.
void DeviceRuntime::note_launch(const std::string& scheduler, unsigned grid, unsigned block, unsigned shared) {
  scheduler_ = scheduler;
  launch_ = scheduler + ": " + std::to_string(grid) + " blocks x " + std::to_string(block) + " threads, " +
            std::to_string(shared) + " B dynamic shared memory";
}

void DeviceRuntime::supervise() {
  mark_end();
  wait(summary_done_);
}

void DeviceRuntime::mark_end() {
  APIARY_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  summarize();
}

// The start kernel's copy list: as kernel parameters, or, when longer, in device memory (one
// copy from the arena ahead of the kernel).
CopyList DeviceRuntime::copy_list() {
  // Room for a long list first: growing the arena after the list is made would move the data
  // its addresses point at.
  const std::size_t listed = staging_->pending.size();
  if (listed > inline_copies) staging_->reserve((listed * sizeof(StagedCopy) + 15) / 16 * 16);
  const std::vector<StagedCopy> list = staging_->copy_list();
  CopyList copies;
  copies.count = static_cast<std::uint32_t>(list.size());
  copies.wide = static_cast<std::uint32_t>(
      std::count_if(list.begin(), list.end(), [](const StagedCopy& c) { return c.words >= wide_copy_words; }));
  if (list.size() <= inline_copies) {
    std::copy(list.begin(), list.end(), copies.inline_list);
    return copies;
  }
  Buffers& b = *buffers_;
  if (b.copy_list.size() < list.size()) b.copy_list = DeviceBuffer<StagedCopy>(2 * list.size(), false);
  const std::size_t offset = staging_->stage(list.data(), list.size() * sizeof(StagedCopy));
  APIARY_CUDA_CHECK(cudaMemcpyAsync(b.copy_list.get(), staging_->arena + offset, list.size() * sizeof(StagedCopy),
                                    cudaMemcpyHostToDevice, stream_));
  copies.list = b.copy_list.get();
  return copies;
}

// Queues the end kernel, which writes the summary into mapped memory, behind the run's work.
void DeviceRuntime::summarize() {
  bookkeeping_.summarize(run_end(), end_grid_limit(), stream_);
  APIARY_CUDA_CHECK(cudaGetLastError());
  APIARY_CUDA_CHECK(cudaEventRecord(summary_done_, stream_));
  summarized_ = true;
}

// The end kernel's input.
RunEnd DeviceRuntime::run_end() const {
  const Buffers& b = *buffers_;
  RunEnd end;
  end.state = b.state.get();
  end.counters = b.queue_counters.get();
  end.num_queues = table_.num_queues();
  end.pool = b.deps.get();
  end.pool_next = b.dep_next.get();
  end.pool_limit = dependency_limit();
  end.slot_state = b.ws_state.get();
  end.slot_queue = b.ws_queue.get();
  end.slots = waiting_slots();
  end.storage_counters = b.ws_counters.get();
  end.cursors = b.cursors.get();
  end.summary = b.summary.get();
  end.host = staging_->summary_device;
  end.end_copy_from = static_cast<const std::byte*>(end_copy_from_);
  end.end_copy_bytes = end_copy_bytes_;
  return end;
}

bool DeviceRuntime::wait(cudaEvent_t event) {
  Buffers& b = *buffers_;
  const auto watchdog = std::chrono::duration<double>(config_.watchdog_seconds);
  std::uint64_t last_progress = ~0ull;
  auto last_change = Clock::now();
  const auto started = Clock::now();
  auto last_watch = started;
  auto sleep = std::chrono::microseconds(16);
  for (;;) {
    drain_host_input();
    const cudaError_t status = cudaEventQuery(event);
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) APIARY_CUDA_CHECK(status);
    // The end of a run is seen when this loop next polls, and callers time runs up to it: the
    // first 100 ms poll with a yield (a timesliced round, a short solve: sleeping here added
    // up to 2 ms to runs of 0.3-5 ms), longer runs back off to 1 ms sleeps (< 1% of the run).
    const auto waited = Clock::now() - started;
    if (waited < std::chrono::milliseconds(100)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
    }
    // The watchdog reads the device's progress counter at most once a millisecond.
    if (Clock::now() - last_watch < std::chrono::milliseconds(1)) continue;
    last_watch = Clock::now();
    APIARY_CUDA_CHECK(cudaMemcpyAsync(&b.pinned[0], &b.state.get()->progress, sizeof(std::uint64_t),
                                      cudaMemcpyDeviceToHost, monitor_));
    APIARY_CUDA_CHECK(cudaStreamSynchronize(monitor_));
    const auto now = Clock::now();
    // Waiting for host input is not a stall: the watchdog starts once input is closed.
    if (b.pinned[0] != last_progress || (input_ && input_->open)) {
      last_progress = b.pinned[0];
      last_change = now;
      continue;
    }
    if (now - last_change < watchdog) continue;
    // No task batch finished for the whole watchdog period: stop the schedulers.
    watchdog_fired_ = true;
    b.pinned[1] = static_cast<std::uint64_t>(RunStatus::aborted);
    APIARY_CUDA_CHECK(cudaMemcpyAsync(&b.state.get()->status, &b.pinned[1], sizeof(std::uint32_t),
                                      cudaMemcpyHostToDevice, monitor_));
    // Also raise the sticky error (if none is set): threads waiting inside the queues and the
    // waiting storage watch the error word, not the status.
    b.pinned[2] = static_cast<std::uint64_t>(ErrorCode::watchdog);
    APIARY_CUDA_CHECK(cudaMemcpyAsync(&b.state.get()->error.code, &b.pinned[2], sizeof(std::uint32_t),
                                      cudaMemcpyHostToDevice, monitor_));
    APIARY_CUDA_CHECK(cudaStreamSynchronize(monitor_));
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (cudaEventQuery(event) == cudaErrorNotReady) {
      if (Clock::now() > deadline) {
        kernel_hung_ = true;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
}

Report DeviceRuntime::build_report(const RunSummary& summary) const {
  Report r;
  r.scheduler = scheduler_;
  r.device = device_.name;
  r.launch = launch_;
  r.rounds = rounds_;
  r.launches = launches_;
  r.status = static_cast<RunStatus>(summary.state.status);
  r.phase_changes = PhaseWord::unpack(summary.state.phase_word).epoch;
  for (std::uint32_t q = 0; q < table_.num_queues(); ++q) {
    const QueueLayout& layout = table_.queues()[q];
    QueueReport qr;
    qr.name = layout.name;
    qr.phase = layout.phase;
    qr.executed = summary.counters[q].executed;
    qr.queued = summary.counters[q].tail - summary.counters[q].head;
    qr.capacity = queue_ring_capacity(layout.capacity);
    qr.parked = summary.parked_per_queue[q];
    qr.claimable = summary.counters[q].available;
    qr.draining_blocks = summary.state.live_blocks[q];
    r.total_executed += qr.executed;
    r.queues.push_back(qr);
  }
  r.parked = summary.parked;
  r.unresolved_dependencies = summary.unresolved_dependencies;
  if (r.unresolved_dependencies > 0) describe_unresolved(summary.dependencies_used, r);
  return r;
}

// The first unresolved entries of the pool, for the report (read only when there are any).
void DeviceRuntime::describe_unresolved(std::uint32_t used, Report& r) const {
  std::vector<Dependency> deps(used);
  to_host(deps.data(), buffers_->deps.get(), used);
  for (std::uint32_t i = 0; i < used && r.unresolved_examples.size() < 8; ++i) {
    const std::int32_t counter = deps[i].counter();
    if (counter == 0) continue;
    if (counter > held_offset / 2)  // a task waits for it in a block's hand-off slot (ctx.spawn_next_when)
      r.unresolved_examples.push_back("dependency #" + std::to_string(i) + ": a held task waits for " +
                                      std::to_string(counter - held_offset) + " more resolution(s)");
    else
      r.unresolved_examples.push_back("dependency #" + std::to_string(i) + ": counter " + std::to_string(counter) +
                                      (counter > 0 ? " (resolutions still expected)" : " (resolved before its spawn)"));
  }
}

void DeviceRuntime::collect_trace(const TraceCursors& cursors) {
  const Buffers& b = *buffers_;
  trace_ = Trace{};
  trace_.device = device_.name;
  trace_.scheduler = scheduler_;
  trace_.num_sms = device_.sm_count;
  trace_.num_phases = static_cast<int>(table_.num_phases());
  trace_.cyclic = table_.cyclic();
  for (const auto& q : table_.queues()) {
    trace_.queue_names.push_back(q.name);
    trace_.queue_phase.push_back(q.phase);
  }
  const std::uint64_t tasks = std::min<std::uint64_t>(cursors.tasks, config_.trace_capacity);
  const std::uint64_t events = std::min<std::uint64_t>(cursors.events, config_.trace_event_capacity);
  trace_.dropped_tasks = cursors.tasks - tasks;
  trace_.dropped_events = cursors.events - events;
  trace_.tasks.resize(tasks);
  trace_.events.resize(events);
  if (tasks) to_host(trace_.tasks.data(), b.records.get(), tasks);
  if (events) to_host(trace_.events.data(), b.events.get(), events);
}

Report DeviceRuntime::finish_run() {
  if (kernel_hung_) {
    Report r;
    throw StallError("the watchdog stopped the run after " + std::to_string(config_.watchdog_seconds) +
                     " s without progress, but the " + scheduler_ +
                     " kernel did not end within 10 s: a task does not return (a task that waits for "
                     "something should poll ctx.cancelled()). The GPU stays busy; end the process.");
  }
  if (!summarized_) mark_end();
  const cudaError_t sync = cudaStreamSynchronize(stream_);
  if (sync != cudaSuccess) {
    buffers_->failed = true;
    APIARY_CUDA_CHECK(sync);
  }
  float ms = 0;
  APIARY_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  const RunSummary& summary = *staging_->summary;
  std::copy_n(summary.counters, table_.num_queues(), counters_.begin());
  Report report = build_report(summary);
  report.wall_ms = ms;
  const RunState& state = summary.state;
  const bool ended_well = (report.status == RunStatus::finished || report.status == RunStatus::stopped) &&
                          state.error.code == 0;
  if (config_.trace && ended_well) collect_trace(summary.cursors);
  if (!ended_well) throw_failure(state, std::move(report));
  return report;
}

void DeviceRuntime::throw_failure(const RunState& state, Report report) const {
  buffers_->failed = true;
  const ErrorWord& e = state.error;
  const auto code = static_cast<ErrorCode>(e.code);
  std::ostringstream msg;
  switch (code) {
    case ErrorCode::queue_full: {
      const QueueLayout& q = table_.queues().at(e.where);
      msg << "queue '" << q.name << "' overflowed: capacity " << e.capacity << " tasks (requested " << q.capacity
          << ", rounded up to a power of two), " << e.detail << " were outstanding at once. Raise the config key '"
          << describe_capacity_key(q) << "'.";
      report.errors.push_back(msg.str());
      throw CapacityError(msg.str() + "\n" + report.format());
    }
    case ErrorCode::waiting_storage_full:
      msg << "the waiting storage is full: its " << e.capacity << " slots (waiting_storage_capacity "
          << config_.waiting_storage_capacity << " and one per thread the device holds, for slots freed late) hold "
          << "tasks parked on dependencies. Raise the config key 'waiting_storage_capacity'.";
      report.errors.push_back(msg.str());
      throw CapacityError(msg.str() + "\n" + report.format());
    case ErrorCode::dependency_pool_full:
      msg << "the runtime's dependency pool is exhausted: " << e.capacity
          << " dependencies. Raise the config key 'dependency_capacity'.";
      report.errors.push_back(msg.str());
      throw CapacityError(msg.str() + "\n" + report.format());
    case ErrorCode::parked_without_producer:
      msg << "the run cannot finish: " << e.detail
          << " task(s) wait in the waiting storage for dependencies that are never resolved (no task is queued "
             "or running that could resolve them).";
      report.errors.push_back(msg.str());
      throw StallError(msg.str() + "\n" + report.format());
    case ErrorCode::phase_already_ended:
      msg << e.detail << " task(s) were queued for phase " << e.where
          << " after it ended; this graph is not cyclic, so they can never run. Declare it cyclic "
             "(CyclicPhaseQueue) or move their task type to a later phase.";
      report.errors.push_back(msg.str());
      throw Error(msg.str() + "\n" + report.format());
    case ErrorCode::launch_failed:
      msg << "a device-side launch of the device controller failed (CUDA error " << e.detail << ": "
          << cudaGetErrorString(static_cast<cudaError_t>(e.detail)) << ") "
          << (e.where < table_.num_queues() ? "for the workers of '" + table_.queues()[e.where].name + "'"
                                            : std::string("for the next controller wave"));
      if (scheduler_.rfind("device_controller_wave", 0) == 0) {
        // Wave mode sizes the nodes of its own device graph and relaunches it: no launch pool.
        msg << " while the wave's device graph set its worker nodes or relaunched itself.";
        report.errors.push_back(msg.str());
        throw CudaError(msg.str() + "\n" + report.format());
      }
      msg << ": the pending-launch pool (cudaLimitDevRuntimePendingLaunchCount) holds " << e.capacity
          << " launches. Raise the config key 'device_controller.pending_launches'.";
      report.errors.push_back(msg.str());
      throw CapacityError(msg.str() + "\n" + report.format());
    default:
      break;
  }
  if (watchdog_fired_) {
    msg << "the watchdog stopped the run: no task batch finished for " << config_.watchdog_seconds
        << " s (config key 'watchdog_seconds'). Tasks that waited in a block at a gate that never opened "
           "(ctx.hold_next_at) went back to their queues and are counted as queued.";
    report.errors.push_back(msg.str());
    throw StallError(msg.str() + "\n" + report.format());
  }
  msg << "the run ended with status " << to_string(report.status) << " (error code " << e.code << ")";
  report.errors.push_back(msg.str());
  throw Error(msg.str() + "\n" + report.format());
}

}  // namespace apiary
