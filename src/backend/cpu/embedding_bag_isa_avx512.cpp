// embedding_bag_sum's inner loop for the avx512 variant (compile flags set in CMakeLists.txt).
#define TELAR_EB_ISA avx512
#include "backend/cpu/embedding_bag_isa.hpp"
