// A FIFO on a reused array. Packets in the model are small values; queues of them must not
// allocate per packet, so each queue grows (by doubling) only until it has seen its peak depth.
// The capacity is a power of two so that wrapping is a mask: a division per push and pop was a
// visible share of every packet's cost. It is full when its size passes the mask: comparing with
// the vector's size divides by the element's size.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace dmasim::sim {

template <class T>
class Ring {
public:
    explicit Ring(std::size_t capacity = 16) : buf_(round_up(capacity)), mask_(buf_.size() - 1) {}

    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    T& front() { return buf_[head_]; }
    const T& front() const { return buf_[head_]; }
    T& back() { return buf_[(head_ + size_ - 1) & mask_]; }
    const T& back() const { return buf_[(head_ + size_ - 1) & mask_]; }

    void push(const T& v) {
        if (size_ > mask_) grow();
        buf_[(head_ + size_) & mask_] = v;
        ++size_;
    }
    // The slot the next push would fill, already counted: filling a large entry in place avoids
    // building it on the stack and copying it.
    T& push_slot() {
        if (size_ > mask_) grow();
        T& slot = buf_[(head_ + size_) & mask_];
        ++size_;
        return slot;
    }
    void pop() {
        head_ = (head_ + 1) & mask_;
        --size_;
    }
    void clear() {
        head_ = 0;
        size_ = 0;
    }

private:
    static std::size_t round_up(std::size_t n) {
        std::size_t c = 2;
        while (c < n) c *= 2;
        return c;
    }
    void grow() {
        std::vector<T> bigger(buf_.size() * 2);
        for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(buf_[(head_ + i) & mask_]);
        buf_.swap(bigger);
        mask_ = buf_.size() - 1;
        head_ = 0;
    }

    std::vector<T> buf_;
    std::size_t mask_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

}  // namespace dmasim::sim
