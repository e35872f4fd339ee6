// embedding_bag_sum's inner loop for the avx2 variant (compile flags set in CMakeLists.txt).
#define TELAR_EB_ISA avx2
#include "backend/cpu/embedding_bag_isa.hpp"
