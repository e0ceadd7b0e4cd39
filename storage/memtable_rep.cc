#include "storage/memtable_rep.h"

#include <rocksdb/memtablerep.h>
#include <rocksdb/utilities/object_registry.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace tarde::storage {
namespace {

using rocksdb::KeyHandle;
using rocksdb::Slice;

constexpr const char* kFactoryName = "TardeSkipList";

// Levels of the list; a node reaches level i+1 with probability
// 1/kBranching. Four and twelve levels, as RocksDB's list: room for about
// 4^12 = 16 million entries before searches lengthen, far above what a
// 4 MB memtable holds.
constexpr int kMaxHeight = 12;
constexpr uint32_t kBranching = 4;

// A node is its key bytes (RocksDB's entry: the varint32 length of the
// internal key, the internal key, the value) preceded by its links, link i
// at 8 * (i + 1) bytes before the key. A node is named by its key's address.
using Link = std::atomic<char*>;
static_assert(sizeof(Link) == sizeof(char*));

Link* link_of(char* node, int level) { return reinterpret_cast<Link*>(node) - (level + 1); }

char* next_of(char* node, int level) {
  return link_of(node, level)->load(std::memory_order_acquire);
}

// An internal key taken apart: the user key and its 8-byte trailer
// (sequence << 8 | type, little-endian), which orders equal user keys
// newest first.
struct Key {
  const char* user;
  size_t user_size;
  uint64_t trailer;
};

Key split(const char* internal_key, size_t size) {
  uint64_t trailer = 0;
  std::memcpy(&trailer, internal_key + size - 8, 8);
  if constexpr (std::endian::native == std::endian::big) trailer = __builtin_bswap64(trailer);
  return Key{internal_key, size - 8, trailer};
}

// The key of an entry: its internal key follows a varint32 of its length.
Key key_of(const char* entry) {
  uint32_t size = 0;
  int shift = 0;
  const auto* p = reinterpret_cast<const uint8_t*>(entry);
  while (true) {
    const uint8_t byte = *p++;
    size |= static_cast<uint32_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
    shift += 7;
  }
  return split(reinterpret_cast<const char*>(p), size);
}

// RocksDB's order of internal keys over the bytewise comparator.
int compare(const Key& a, const Key& b) {
  const int by_bytes = std::memcmp(a.user, b.user, std::min(a.user_size, b.user_size));
  if (by_bytes != 0) return by_bytes;
  if (a.user_size != b.user_size) return a.user_size < b.user_size ? -1 : 1;
  if (a.trailer != b.trailer) return a.trailer > b.trailer ? -1 : 1;
  return 0;
}

class SkipList final : public rocksdb::MemTableRep {
 public:
  explicit SkipList(rocksdb::Allocator* allocator)
      : rocksdb::MemTableRep(allocator),
        head_(allocate_node(0, kMaxHeight)),
        sequential_(new_splice()) {}

  // The node's links and its key in one allocation; its height is kept in
  // link 0 until the insert.
  KeyHandle Allocate(const size_t len, char** buf) override {
    const int height = random_height();
    char* node = allocate_node(len, height);
    link_of(node, 0)->store(reinterpret_cast<char*>(static_cast<intptr_t>(height)),
                            std::memory_order_relaxed);
    *buf = node;
    return node;
  }

  void Insert(KeyHandle handle) override { InsertKey(handle); }
  bool InsertKey(KeyHandle handle) override {
    return insert(static_cast<char*>(handle), sequential_);
  }
  void InsertWithHint(KeyHandle handle, void** hint) override { InsertKeyWithHint(handle, hint); }
  bool InsertKeyWithHint(KeyHandle handle, void** hint) override {
    if (*hint == nullptr) *hint = new_splice();
    return insert(static_cast<char*>(handle), static_cast<Splice*>(*hint));
  }

  bool Contains(const char* entry) const override {
    const Key key = key_of(entry);
    char* found = find_greater_or_equal(key);
    return found != nullptr && compare(key_of(found), key) == 0;
  }

  // Everything is allocated from the memtable's arena, which counts it.
  size_t ApproximateMemoryUsage() override { return 0; }

  class Iterator;
  rocksdb::MemTableRep::Iterator* GetIterator(rocksdb::Arena* arena) override;
  rocksdb::MemTableRep::Iterator* GetDynamicPrefixIterator(rocksdb::Arena* arena) override;

  // The last node before key; head_ if none. *after, when given, gets the
  // node that follows it: the first not before key, or nullptr.
  char* find_less_than(const Key& key, char** after = nullptr) const {
    char* node = head_;
    char* next = nullptr;
    for (int level = max_height_.load(std::memory_order_relaxed) - 1; level >= 0; --level) {
      node = last_before(node, level, key, &next);
    }
    if (after != nullptr) *after = next;
    return node;
  }

  // The first node not before key; nullptr if none.
  char* find_greater_or_equal(const Key& key) const {
    char* after = nullptr;
    find_less_than(key, &after);
    return after;
  }

  // The last node; head_ if none.
  char* find_last() const {
    char* node = head_;
    for (int level = max_height_.load(std::memory_order_relaxed) - 1; level >= 0; --level) {
      for (char* next = next_of(node, level); next != nullptr; next = next_of(node, level)) {
        node = next;
      }
    }
    return node;
  }

  char* head() const { return head_; }
  // Takes back the storage of an iterator made for an arena.
  void give_back(void* storage);

 private:
  // Where the last insert through it went: at each level, the node before
  // it and the one after. An insert whose key still falls between the two
  // at level 0, where nothing came in between, links in there.
  struct Splice {
    int height = 0;  // levels it holds; 0 before its first use
    char* prev[kMaxHeight];
    char* next[kMaxHeight];
  };

  // `bytes` from the memtable's arena, aligned for links and splices (the
  // arena's plain allocation is not aligned).
  void* allocate_aligned(size_t bytes) {
    static_assert(alignof(Splice) >= alignof(Link));
    char* raw = nullptr;
    size_t room = bytes + alignof(Splice) - 1;
    rocksdb::MemTableRep::Allocate(room, &raw);
    void* at = raw;
    return std::align(alignof(Splice), bytes, at, room);
  }

  char* allocate_node(size_t key_bytes, int height) {
    const size_t links = sizeof(Link) * static_cast<size_t>(height);
    char* node = static_cast<char*>(allocate_aligned(links + key_bytes)) + links;
    for (int i = 0; i < height; ++i) new (link_of(node, i)) Link(nullptr);
    return node;
  }

  Splice* new_splice() { return new (allocate_aligned(sizeof(Splice))) Splice(); }

  int random_height() {
    // xorshift64: the writer's alone, so a plain member.
    int height = 1;
    while (height < kMaxHeight) {
      random_ ^= random_ << 13;
      random_ ^= random_ >> 7;
      random_ ^= random_ << 17;
      if (random_ % kBranching != 0) break;
      ++height;
    }
    return height;
  }

  // Whether splice's level-0 pair still brackets key with nothing linked
  // between them since.
  bool brackets(const Splice& splice, const Key& key, int* order_after) const {
    if (splice.height == 0) return false;
    char* prev = splice.prev[0];
    char* next = splice.next[0];
    if (next_of(prev, 0) != next) return false;
    if (prev != head_ && compare(key_of(prev), key) >= 0) return false;
    *order_after = next == nullptr ? -1 : compare(key, key_of(next));
    return *order_after <= 0;
  }

  // From node, which is before key, the last node of `level` before key;
  // *after gets the one that follows it there.
  static char* last_before(char* node, int level, const Key& key, char** after) {
    char* next = next_of(node, level);
    while (next != nullptr && compare(key_of(next), key) < 0) {
      node = next;
      next = next_of(node, level);
    }
    *after = next;
    return node;
  }

  // Fills splice's levels [0, height) by a search from the top.
  void search(const Key& key, int height, Splice* splice) const {
    char* node = head_;
    for (int level = height - 1; level >= 0; --level) {
      node = last_before(node, level, key, &splice->next[level]);
      splice->prev[level] = node;
    }
    splice->height = height;
  }

  bool insert(char* node, Splice* splice) {
    const int height = static_cast<int>(
        reinterpret_cast<intptr_t>(link_of(node, 0)->load(std::memory_order_relaxed)));
    const Key key = key_of(node);
    int list_height = max_height_.load(std::memory_order_relaxed);
    if (height > list_height) {
      // The new levels hold nothing yet: head_ to the end brackets any key.
      // Readers that see the new height before the node find head_'s null
      // links there, which end those levels at once.
      for (int level = list_height; level < height; ++level) {
        splice->prev[level] = head_;
        splice->next[level] = nullptr;
      }
      if (splice->height == list_height) splice->height = height;
      list_height = height;
      max_height_.store(height, std::memory_order_relaxed);
    }
    int order = 0;
    if (splice->height < list_height || !brackets(*splice, key, &order)) {
      search(key, list_height, splice);
      order = splice->next[0] == nullptr ? -1 : compare(key, key_of(splice->next[0]));
    } else {
      // Level 0 brackets the key; a higher level still does unless a node
      // came in between since, and then the walk starts from its prev.
      for (int level = 1; level < height; ++level) {
        splice->prev[level] = last_before(splice->prev[level], level, key, &splice->next[level]);
      }
    }
    if (order == 0) return false;  // this key and sequence are already in
    for (int level = 0; level < height; ++level) {
      link_of(node, level)->store(splice->next[level], std::memory_order_relaxed);
      link_of(splice->prev[level], level)->store(node, std::memory_order_release);
      splice->prev[level] = node;
    }
    return true;
  }

  // Room for one iterator; see GetIterator.
  struct IteratorStorage {
    alignas(std::max_align_t) std::byte bytes[64];
  };

  char* head_;
  std::atomic<int> max_height_{1};
  std::mutex spare_iterators_mutex_;
  std::vector<std::unique_ptr<IteratorStorage>> owned_iterators_;
  std::vector<void*> spare_iterators_;
  Splice* sequential_;
  uint64_t random_ = 0x9e3779b97f4a7c15ull;
};

class SkipList::Iterator final : public rocksdb::MemTableRep::Iterator {
 public:
  Iterator(SkipList* list, bool in_list_storage) : list_(list), in_list_storage_(in_list_storage) {}
  ~Iterator() override {
    if (in_list_storage_) list_->give_back(this);
  }
  // Serves another read of `list`, from no entry.
  void restart(SkipList* list) {
    list_ = list;
    node_ = nullptr;
  }

  bool Valid() const override { return node_ != nullptr; }
  const char* key() const override { return node_; }
  void Next() override { node_ = next_of(node_, 0); }
  void Prev() override {
    char* before = list_->find_less_than(key_of(node_));
    node_ = before == list_->head() ? nullptr : before;
  }
  void Seek(const Slice& internal_key, const char* memtable_key) override {
    node_ = list_->find_greater_or_equal(memtable_key != nullptr
                                             ? key_of(memtable_key)
                                             : split(internal_key.data(), internal_key.size()));
  }
  void SeekForPrev(const Slice& internal_key, const char* memtable_key) override {
    const Key target = memtable_key != nullptr ? key_of(memtable_key)
                                               : split(internal_key.data(), internal_key.size());
    char* found = list_->find_greater_or_equal(target);
    if (found != nullptr && compare(key_of(found), target) == 0) {
      node_ = found;
      return;
    }
    char* before = list_->find_less_than(target);
    node_ = before == list_->head() ? nullptr : before;
  }
  void SeekToFirst() override { node_ = next_of(list_->head(), 0); }
  void SeekToLast() override {
    char* last = list_->find_last();
    node_ = last == list_->head() ? nullptr : last;
  }

 private:
  SkipList* list_;
  bool in_list_storage_;
  char* node_ = nullptr;
};

static_assert(sizeof(SkipList::Iterator) <= 64, "IteratorStorage holds an iterator");

rocksdb::MemTableRep::Iterator* SkipList::GetIterator(rocksdb::Arena* arena) {
  if (arena == nullptr) return new Iterator(this, false);
  // RocksDB only destroys an iterator it asked to be put in an arena, and
  // frees the arena later. Its arena class is not in its public headers,
  // and the memtable's own arena must not grow once the memtable is
  // immutable (RocksDB subtracts what it used when it was switched), so
  // such an iterator is made in storage this list keeps, and gives the
  // storage back when destroyed.
  void* storage = nullptr;
  {
    std::lock_guard<std::mutex> lock(spare_iterators_mutex_);
    if (spare_iterators_.empty()) {
      owned_iterators_.push_back(std::make_unique<IteratorStorage>());
      storage = owned_iterators_.back().get();
    } else {
      storage = spare_iterators_.back();
      spare_iterators_.pop_back();
    }
  }
  return new (storage) Iterator(this, true);
}

// RocksDB asks for an iterator without an arena in one place we know of,
// MemTableRep::Get (every point read of a memtable), and never frees it:
// RocksDB's own list answers Get itself, but through LookupKey, a class
// its public headers do not have. So Get reads through one iterator per
// thread, never allocated and never freed; a Get runs to its end before
// the thread can start another. (Its own iterators, made for an arena,
// come from GetIterator; MemTable asks for this kind only with a prefix
// extractor, which tarde's families do not set.)
rocksdb::MemTableRep::Iterator* SkipList::GetDynamicPrefixIterator(rocksdb::Arena* arena) {
  if (arena != nullptr) return GetIterator(arena);
  thread_local Iterator reused(nullptr, false);
  reused.restart(this);
  return &reused;
}

void SkipList::give_back(void* storage) {
  std::lock_guard<std::mutex> lock(spare_iterators_mutex_);
  spare_iterators_.push_back(storage);
}

class SkipListFactory final : public rocksdb::MemTableRepFactory {
 public:
  static const char* kClassName() { return kFactoryName; }
  const char* Name() const override { return kClassName(); }
  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& /*compare*/,
                                          rocksdb::Allocator* allocator,
                                          const rocksdb::SliceTransform* /*prefix*/,
                                          rocksdb::Logger* /*logger*/) override {
    return new SkipList(allocator);
  }
  bool IsInsertConcurrentlySupported() const override { return false; }
  bool CanHandleDuplicatedKey() const override { return true; }
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> skip_list_memtable_factory() {
  // RocksDB writes the factory's name into the OPTIONS file and parses the
  // file back to check it: the name must make this factory.
  static const bool registered = [] {
    rocksdb::ObjectLibrary::Default()->AddFactory<rocksdb::MemTableRepFactory>(
        kFactoryName,
        [](const std::string& /*uri*/, std::unique_ptr<rocksdb::MemTableRepFactory>* guard,
           std::string* /*msg*/) {
          guard->reset(new SkipListFactory());
          return guard->get();
        });
    return true;
  }();
  (void)registered;
  static const auto factory = std::make_shared<SkipListFactory>();
  return factory;
}

}  // namespace tarde::storage
