// Compile-time lists of types — the compiled execution spaces, the penalty policies — and a loop over them.
#pragma once

namespace rh::detail {

template <class... T>
struct TypeList {};

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for every T of the list, in order.
template <class... T, class F>
void for_each_type(TypeList<T...>, F&& f) {
  (f(Tag<T>{}), ...);
}

// An X-macro expands to ", A, B": TypeList<void, A, B> then drops the placeholder in front.
template <class List>
struct DropFirst;
template <class First, class... Rest>
struct DropFirst<TypeList<First, Rest...>> {
  using type = TypeList<Rest...>;
};

}  // namespace rh::detail
