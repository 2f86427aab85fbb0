// A FIFO on a reused array. Packets in the model are small values; queues of them must not
// allocate per packet, so each queue grows (by doubling) only until it has seen its peak depth.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace dmasim::sim {

template <class T>
class Ring {
public:
    explicit Ring(std::size_t capacity = 16) : buf_(capacity < 2 ? 2 : capacity) {}

    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    T& front() { return buf_[head_]; }
    const T& front() const { return buf_[head_]; }
    T& back() { return buf_[(head_ + size_ - 1) % buf_.size()]; }

    void push(const T& v) {
        if (size_ == buf_.size()) grow();
        buf_[(head_ + size_) % buf_.size()] = v;
        ++size_;
    }
    void pop() {
        head_ = (head_ + 1) % buf_.size();
        --size_;
    }
    void clear() {
        head_ = 0;
        size_ = 0;
    }

private:
    void grow() {
        std::vector<T> bigger(buf_.size() * 2);
        for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(buf_[(head_ + i) % buf_.size()]);
        buf_.swap(bigger);
        head_ = 0;
    }

    std::vector<T> buf_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

}  // namespace dmasim::sim
