// embedding_bag_sum's inner loop for the portable variant (compile flags set in CMakeLists.txt).
#define TELAR_EB_ISA portable
#include "backend/cpu/embedding_bag_isa.hpp"
