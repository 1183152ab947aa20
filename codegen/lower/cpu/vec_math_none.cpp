// vec_math.hpp's tables on CPUs other than x86-64: the scalar one.
#include "vec_math.hpp"

namespace einexpr::cpu::vec {

const Table& best_table() noexcept {
  static const Table t = detail::scalar_table();
  return t;
}

Tables runnable_tables() noexcept {
  Tables t;
  t.list[t.count++] = &best_table();
  return t;
}

}  // namespace einexpr::cpu::vec
