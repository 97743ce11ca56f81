// The allocator behind Tensor::data: std::allocator, except that resize() default-initialises,
// so a buffer a kernel overwrites completely is not zeroed first (Tensor(shape) still zeroes
// explicitly; Tensor::uninitialized(shape) does not). For the attention map ([H, T, S]) that
// zeroing was a quarter of a warm pass at T=2048.
// (Transparent huge pages via MADV_HUGEPAGE were measured too: warm passes 1.6x faster at T=2048,
// but first-touch compaction stalls made single runs erratic, 220-790 ms, so they are not used.)
#pragma once

#include <memory>
#include <utility>

namespace attn_viz {

template <class T>
struct TensorAllocator : std::allocator<T> {
    TensorAllocator() noexcept = default;
    template <class U>
    TensorAllocator(const TensorAllocator<U>&) noexcept {}
    template <class U>
    struct rebind {
        using other = TensorAllocator<U>;
    };

    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;  // default-initialise: no zeroing
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

}  // namespace attn_viz
