// The per-task-type work queue: a bounded MPMC ring of fixed-size work items.
//
// Producers reserve tickets with one fetch_add on `tail` per batch, wait until the slot of
// each ticket is free (its previous lap was consumed), write the items, publish each slot
// through its sequence number (release) and make the batch claimable with one fetch_add on
// `available`. Consumers take up to n items with one fetch_sub on `available` (giving back
// what they over-took) and one fetch_add on `head`, then wait for each claimed ticket to be
// published (acquire), read it, and free its slot for the next lap. `available` only counts
// items whose publish was issued, so a consumer never claims a ticket nobody will publish, and
// a waiting consumer only ever waits for a producer that is already past its publish.
//
// Sequence numbers per slot, relative to the slot's lap base b = t - (t mod capacity): b (free
// for ticket t), b + 1 (published ticket t), b + capacity (consumed; free for the next lap).
// Zero-filled memory is therefore an empty queue.
#pragma once

#include <apiary/device_error.hpp>
#include <apiary/platform.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace apiary {

// Counters of one queue, each on its own 128-byte line so producers and consumers do not
// false-share.
struct QueueCounters {
  alignas(128) std::uint64_t tail;       // tickets reserved by producers
  alignas(128) std::uint64_t head;       // tickets claimed by consumers
  alignas(128) std::int64_t available;   // published and not yet claimed (may dip below 0)
  alignas(128) std::uint64_t executed;   // statistics: tasks run from this queue
};

inline constexpr std::uint32_t queue_item_alignment = 8;

APIARY_HD constexpr std::uint32_t queue_stride(std::uint32_t item_size) {
  return (item_size + queue_item_alignment - 1) / queue_item_alignment * queue_item_alignment;
}

// Rounds a requested capacity up to the power of two the ring uses.
APIARY_HD constexpr std::uint64_t queue_ring_capacity(std::uint64_t requested) {
  std::uint64_t c = 1;
  while (c < requested) c <<= 1;
  return c;
}

// Copies an item: 8-byte words (slots are 8-byte aligned), then any tail bytes. Both
// pointers must be 8-byte aligned.
APIARY_HD inline void copy_words(void* dst, const void* src, std::uint32_t bytes) {
  auto* d = static_cast<std::uint64_t*>(dst);
  const auto* s = static_cast<const std::uint64_t*>(src);
  const std::uint32_t words = bytes / 8;
  for (std::uint32_t i = 0; i < words; ++i) d[i] = s[i];
  for (std::uint32_t i = words * 8; i < bytes; ++i)
    static_cast<unsigned char*>(dst)[i] = static_cast<const unsigned char*>(src)[i];
}

struct QueueView {
  QueueCounters* counters = nullptr;
  std::uint64_t* seq = nullptr;       // capacity sequence numbers
  std::byte* items = nullptr;         // capacity * stride bytes
  std::uint64_t* tags = nullptr;      // optional per-slot tag (dependency id when tracing)
  std::uint64_t mask = 0;             // capacity - 1
  std::uint32_t stride = 0;           // bytes per slot, multiple of 8
  std::uint32_t index = 0;            // queue index, for error reports
  ErrorWord* error = nullptr;

  APIARY_HD std::uint64_t capacity() const { return mask + 1; }
  APIARY_HD std::byte* slot(std::uint64_t ticket) const { return items + (ticket & mask) * stride; }
  APIARY_HD std::uint64_t lap_base(std::uint64_t ticket) const { return ticket & ~mask; }

  // Items published and not yet claimed; a hint (exact only when the queue is quiescent).
  APIARY_HD std::int64_t available_hint() const { return load_relaxed(counters->available); }
  // Tickets reserved and not yet claimed, including items still being written.
  APIARY_HD std::int64_t outstanding_hint() const {
    return std::int64_t(load_relaxed(counters->tail) - load_relaxed(counters->head));
  }

  // ---- producer side ----------------------------------------------------------------

  // Reserves k consecutive tickets. Fails (and raises queue_full) when more than capacity
  // items would be outstanding at once.
  APIARY_HD bool reserve(std::uint32_t k, std::uint64_t& first) const {
    first = DeviceAtomic<std::uint64_t>(counters->tail).fetch_add(k, mo::relaxed);
    const std::uint64_t end = first + k;
    // Signed: consumers may already have claimed tickets beyond `end` (published by faster
    // producers) and be waiting for ours.
    auto outstanding = [end](std::uint64_t head) { return std::int64_t(end - head); };
    if (outstanding(load_relaxed(counters->head)) <= std::int64_t(capacity())) return true;
    // The relaxed load may be stale: confirm with a read-modify-write, which sees the latest head.
    const std::int64_t confirmed = outstanding(DeviceAtomic<std::uint64_t>(counters->head).fetch_add(0, mo::relaxed));
    if (confirmed <= std::int64_t(capacity())) return true;
    raise_error(*error, ErrorCode::queue_full, index, capacity(), std::uint64_t(confirmed));
    return false;
  }

  // Waits until the slot of `ticket` is free. Returns false if the run failed meanwhile.
  APIARY_HD bool wait_free(std::uint64_t ticket) const {
    DeviceAtomic<std::uint64_t> s(seq[ticket & mask]);
    while (s.load(mo::acquire) != lap_base(ticket)) {
      if (has_error(*error)) return false;
      spin_pause();
    }
    return true;
  }

  APIARY_HD void write(std::uint64_t ticket, const void* item, std::uint32_t bytes, std::uint64_t tag = 0) const {
    copy_words(slot(ticket), item, bytes);
    if (tags) tags[ticket & mask] = tag;
  }

  APIARY_HD void publish(std::uint64_t ticket) const { store_release(seq[ticket & mask], lap_base(ticket) + 1); }

  // Makes k published items claimable. Relaxed: consumers synchronise with each slot's
  // publish (wait_published acquires its sequence number), never with this count, so a
  // consumer that sees the count before the publish only waits for a producer already past
  // it. (A release here cost a second fence per spawn.)
  APIARY_HD void commit(std::uint32_t k) const {
    DeviceAtomic<std::int64_t>(counters->available).fetch_add(k, mo::relaxed);
  }

  // ---- consumer side ----------------------------------------------------------------

  // Claims up to max_items published items; returns how many, the first ticket in `first`.
  APIARY_HD std::uint32_t claim(std::uint32_t max_items, std::uint64_t& first) const {
    return claim(max_items, available_hint(), first);
  }

  // The same, given the fill level the caller just read (`seen`), which saves reading it again.
  APIARY_HD std::uint32_t claim(std::uint32_t max_items, std::int64_t seen, std::uint64_t& first) const {
    DeviceAtomic<std::int64_t> available(counters->available);
    if (seen <= 0 || max_items == 0) return 0;
    const std::int64_t want = seen < std::int64_t(max_items) ? seen : std::int64_t(max_items);
    // Relaxed: the claimed items are read only after their slots' publish is acquired
    // (wait_published), so the count orders nothing.
    const std::int64_t before = available.fetch_sub(want, mo::relaxed);
    const std::int64_t got = before >= want ? want : (before > 0 ? before : 0);
    if (got < want) available.fetch_add(want - got, mo::relaxed);  // give back the over-take
    if (got == 0) return 0;
    first = DeviceAtomic<std::uint64_t>(counters->head).fetch_add(std::uint64_t(got), mo::relaxed);
    return static_cast<std::uint32_t>(got);
  }

  // Waits until `ticket` is published. Returns false if the run failed meanwhile.
  APIARY_HD bool wait_published(std::uint64_t ticket) const {
    DeviceAtomic<std::uint64_t> s(seq[ticket & mask]);
    while (s.load(mo::acquire) != lap_base(ticket) + 1) {
      if (has_error(*error)) return false;
      spin_pause();
    }
    return true;
  }

  APIARY_HD void read(std::uint64_t ticket, void* item, std::uint32_t bytes) const {
    copy_words(item, slot(ticket), bytes);
  }
  APIARY_HD std::uint64_t tag(std::uint64_t ticket) const { return tags ? tags[ticket & mask] : 0; }

  // Frees the slot of a consumed ticket for the producer one lap ahead.
  APIARY_HD void release(std::uint64_t ticket) const {
    store_release(seq[ticket & mask], lap_base(ticket) + capacity());
  }

  // ---- convenience for single items (host injection, hand-off flush, tests) -------------

  // Enqueues one item given as 8-byte aligned words (the caller counted it pending).
  APIARY_HD bool push_words(const void* words, std::uint32_t bytes, std::uint64_t tag = 0) const {
    std::uint64_t ticket;
    if (!reserve(1, ticket) || !wait_free(ticket)) return false;
    write(ticket, words, bytes, tag);
    publish(ticket);
    commit(1);
    return true;
  }

  template <class Item>
  APIARY_HD bool push(const Item& item, std::uint64_t tag = 0) const {
    static_assert(std::is_trivially_copyable_v<Item>, "work items must be trivially copyable");
    alignas(8) std::byte buffer[queue_stride(sizeof(Item))] = {};
    std::memcpy(buffer, &item, sizeof(Item));
    return push_words(buffer, queue_stride(sizeof(Item)), tag);
  }

  // Pops one item; false if none was available.
  template <class Item>
  APIARY_HD bool pop(Item& item) const {
    std::uint64_t ticket;
    if (claim(1, ticket) == 0) return false;
    if (!wait_published(ticket)) return false;
    alignas(8) std::byte buffer[queue_stride(sizeof(Item))];
    read(ticket, buffer, queue_stride(sizeof(Item)));
    std::memcpy(&item, buffer, sizeof(Item));
    release(ticket);
    return true;
  }
};

}  // namespace apiary
