// The mapper (--tile auto) against exhaustive search: on every public reference case its tile
// must be within 10% of the best legal tile of its search space, for each objective.
#include "sim/mapper.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <limits>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "reference_cases.hpp"
#include "sim/energy.hpp"
#include "sim/stonne_args.hpp"

namespace telar::sim {
namespace {

StonneCommand parse_case(const testing::StonneCase& c) {
  std::vector<std::string> args;
  for (const std::string& w : split(c.command, ' '))
    if (!w.empty()) args.push_back(w);
  return parse_stonne_args(args);
}

TEST(Mapper, WithinTenPercentOfExhaustiveSearchOnTheReferenceCases) {
  int compared = 0;
  for (const auto& c : testing::stonne_cases()) {
    if (c.large) continue;
    const StonneCommand cmd = parse_case(c);
    const Accelerator acc(cmd.hw);
    const std::vector<Tile> all = candidate_tiles(cmd.hw, cmd.op);
    ASSERT_FALSE(all.empty()) << c.id;
    double best[3] = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                      std::numeric_limits<double>::max()};
    for (const Tile& t : all) {
      Stats s;
      try {
        s = acc.estimate(cmd.op, t);
      } catch (const Error&) {
        continue;
      }
      const double e = compute_energy(default_energy_table(), s.counters).total();
      for (MapObjective o : {MapObjective::Performance, MapObjective::Energy, MapObjective::Edp})
        best[static_cast<int>(o)] = std::min(best[static_cast<int>(o)], objective_score(o, s, e));
    }
    for (MapObjective o : {MapObjective::Performance, MapObjective::Energy, MapObjective::Edp}) {
      const MapChoice choice = map_tile(acc, cmd.op, o);
      std::cout << c.id << " " << name(o)
                << ": mapper/best = " << choice.score / best[static_cast<int>(o)] << " ("
                << choice.evaluated << " of " << all.size() << " tiles simulated)\n";
      EXPECT_EQ(tile_violation(cmd.hw, cmd.op, choice.tile), "") << c.id;
      EXPECT_EQ(wrong_result_reason(cmd.hw, cmd.op, choice.tile), "") << c.id;
      EXPECT_LE(choice.score, 1.10 * best[static_cast<int>(o)])
          << c.id << " objective " << name(o) << ": mapper " << describe(choice.tile, cmd.op.kind)
          << " scores " << choice.score << ", exhaustive best " << best[static_cast<int>(o)]
          << " over " << all.size() << " tiles";
      // The chosen tile computes the right result.
      const OpResult r = acc.run(cmd.op, choice.tile);
      EXPECT_TRUE(r.output_correct) << c.id;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 16);
}

TEST(Mapper, ObjectivesParse) {
  EXPECT_EQ(parse_objective("", "x"), MapObjective::Performance);
  EXPECT_EQ(parse_objective("EDP", "x"), MapObjective::Edp);
  EXPECT_EQ(parse_objective("energy", "x"), MapObjective::Energy);
  EXPECT_THROW(parse_objective("speed", "x"), Error);
}

}  // namespace
}  // namespace telar::sim
