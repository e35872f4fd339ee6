// STONNE's formats: .cfg files, tile files, .counters files, the energy table and the
// command-line syntax; round trips and hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "sim/config.hpp"
#include "sim/energy.hpp"
#include "sim/mapper.hpp"
#include "sim/stats.hpp"
#include "sim/stonne_args.hpp"
#include "sim/workload.hpp"

namespace telar::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kConfigs = fs::path(TELAR_SOURCE_DIR) / "configs";

TEST(Config, ShipsTheSeedsConfigurationsWithCorrectNames) {
  struct Expect {
    const char* file;
    int ms, dn, rn;
    bool acc;
    Controller ctrl;
  };
  const Expect expected[] = {
      {"maeri_128mses_128_bw", 128, 128, 128, true, Controller::MaeriDense},
      {"maeri_128mses_64_bw", 128, 64, 64, true, Controller::MaeriDense},
      {"maeri_256mses_64_bw", 256, 64, 64, true, Controller::MaeriDense},
      {"maeri_256mses_128_bw", 256, 128, 128, true, Controller::MaeriDense},
      {"maeri_256mses_256_bw", 256, 256, 256, true, Controller::MaeriDense},
      {"magma_128mses_128_bw", 128, 128, 128, true, Controller::MagmaSparseDense},
      {"sigma_64mses_64_bw", 64, 64, 64, false, Controller::SigmaSparseGemm},
      {"sigma_128mses_64_bw", 128, 64, 64, false, Controller::SigmaSparseGemm},
      {"sigma_128mses_128_bw", 128, 128, 128, false, Controller::SigmaSparseGemm},
      {"sigma_256mses_64_bw", 256, 64, 64, false, Controller::SigmaSparseGemm},
      {"sigma_256mses_128_bw", 256, 128, 128, false, Controller::SigmaSparseGemm},
      {"sigma_256mses_256_bw", 256, 256, 256, false, Controller::SigmaSparseGemm},
  };
  for (const Expect& e : expected) {
    const HardwareConfig c = load_config(kConfigs / (std::string(e.file) + ".cfg"));
    EXPECT_EQ(c.name, e.file);
    EXPECT_EQ(c.mn, MultiplierNetwork::Linear) << e.file;
    EXPECT_EQ(c.ms_size, e.ms) << e.file;
    EXPECT_EQ(c.dn_bw, e.dn) << e.file;
    EXPECT_EQ(c.rn_bw, e.rn) << e.file;
    EXPECT_EQ(c.accumulation_buffer, e.acc) << e.file;
    EXPECT_EQ(c.rn, ReduceNetwork::Art) << e.file;
    EXPECT_EQ(c.controller, e.ctrl) << e.file;
    EXPECT_NO_THROW(validate(c)) << e.file;
  }
  const HardwareConfig tpu = load_config(kConfigs / "tpu_16_16_pes.cfg");
  EXPECT_EQ(tpu.mn, MultiplierNetwork::OsMesh);
  EXPECT_EQ(tpu.ms_rows, 16);
  EXPECT_EQ(tpu.ms_cols, 16);
  EXPECT_EQ(tpu.rn, ReduceNetwork::Temporal);
  EXPECT_EQ(tpu.dn_bw, 32);
  EXPECT_EQ(tpu.rn_bw, 256);
  EXPECT_EQ(tpu.controller, Controller::TpuOsDense);
}

TEST(Config, RoundTripsThroughItsTextForm) {
  for (const auto& entry : fs::directory_iterator(kConfigs)) {
    if (entry.path().extension() != ".cfg") continue;
    const HardwareConfig c = load_config(entry.path());
    const HardwareConfig back = parse_config(format_config(c), "round trip");
    EXPECT_EQ(back.mn, c.mn) << entry.path();
    EXPECT_EQ(back.ms_size, c.ms_size) << entry.path();
    EXPECT_EQ(back.ms_rows, c.ms_rows) << entry.path();
    EXPECT_EQ(back.ms_cols, c.ms_cols) << entry.path();
    EXPECT_EQ(back.rn, c.rn) << entry.path();
    EXPECT_EQ(back.accumulation_buffer, c.accumulation_buffer) << entry.path();
    EXPECT_EQ(back.dn_bw, c.dn_bw) << entry.path();
    EXPECT_EQ(back.rn_bw, c.rn_bw) << entry.path();
    EXPECT_EQ(back.controller, c.controller) << entry.path();
  }
}

TEST(Config, ErrorsNameTheKey) {
  try {
    parse_config("[SDMemory]\ncontroller_type=\"MAERI\"\n", "x.cfg");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("controller_type"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_config("[MSNetwork]\nms_size=lots\n", "x.cfg"), Error);
  EXPECT_THROW(parse_config("[MSNetwork\nms_size=8\n", "x.cfg"), Error);
  HardwareConfig c;
  c.ms_size = 96;
  EXPECT_THROW(validate(c), Error);
  c.ms_size = 64;
  c.dn_bw = 128;
  EXPECT_THROW(validate(c), Error);
}

// Issue 23, item 4: nonsense given as a hardware .cfg used to run on STONNE's defaults with
// exit 0. Misspelt sections and keys, keys before any section, a key set twice, an empty file
// and a file of another kind are one-line errors naming the line (and the nearest key); every
// key of STONNE's format is accepted.
TEST(Config, StrictAboutKeysSectionsAndTheKindOfFile) {
  auto error_of = [](const std::string& text) {
    try {
      parse_config(text, "x.cfg");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error_of("[MSNetwork]\nms_size=64\n[ReduceNetwrk]\ntype=\"ASNETWORK\"\n"),
            "x.cfg:4: unknown key 'ReduceNetwrk.type' in a hardware .cfg; did you mean "
            "'ReduceNetwork.type'?");
  EXPECT_EQ(error_of("[MSNetwork]\nms_sise=64\n"),
            "x.cfg:2: unknown key 'MSNetwork.ms_sise' in a hardware .cfg; did you mean "
            "'MSNetwork.ms_size'?");
  EXPECT_NE(error_of("ms_size=64\n[MSNetwork]\n").find("x.cfg:1: unknown key 'ms_size' (before "
                                                       "any [section])"),
            std::string::npos);
  EXPECT_EQ(error_of("[MSNetwork]\nms_size=64\nms_size=128\n"),
            "x.cfg:3: 'MSNetwork.ms_size' is set twice (first on line 2); keep one");
  EXPECT_NE(error_of("# nothing\n\n").find("no settings"), std::string::npos);
  EXPECT_NE(error_of("RN_WIRE AREA=9.46 STATIC=0 WRITE=0.0018\n").find("expected key=value"),
            std::string::npos);
  // STONNE's own keys, even those it does not model, are fine.
  EXPECT_EQ(error_of("print_stats_enabled=1\n[DSwitch]\nlatency=1\n[ASwitch]\nbuffers_capacity=256\n"
                     "[LookUpTable]\nport_width=1\n[MSNetwork]\nms_size=64\n[SDMemory]\n"
                     "dn_bw=8\nrn_bw=8\nport_width=16\n"),
            "accepted");
  const auto dir = std::filesystem::temp_directory_path();
  EXPECT_THROW(load_config(dir), Error);
}

// The fabric's memory estimate against what is available: an array the engines cannot index
// is refused whatever the memory; a large one only where it would not fit.
TEST(Config, ArraysMustFitTheMachine) {
  HardwareConfig mesh;
  mesh.mn = MultiplierNetwork::OsMesh;
  mesh.ms_rows = mesh.ms_cols = 1024;  // 1,048,576 elements, ~1.9 GB
  EXPECT_NO_THROW(check_fits_memory(mesh, std::nullopt));
  EXPECT_NO_THROW(check_fits_memory(mesh, std::int64_t{4} << 30));
  try {
    check_fits_memory(mesh, std::int64_t{1} << 30);
    FAIL() << "a 1024x1024 mesh fits in 1 GiB";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1048576 multipliers"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1.1 GB this machine"), std::string::npos) << e.what();
  }
  mesh.ms_rows = mesh.ms_cols = 65536;  // 2^32: beyond 32-bit indices
  EXPECT_THROW(check_fits_memory(mesh, std::nullopt), Error);
  HardwareConfig linear;
  linear.ms_size = 1 << 27;
  EXPECT_THROW(check_fits_memory(linear, std::nullopt), Error);
  linear.ms_size = 256;
  EXPECT_NO_THROW(check_fits_memory(linear, std::int64_t{1} << 30));
}

TEST(Tile, ReadsStonneTileFiles) {
  // STONNE's own example file: keys with an apostrophe, no tile_type (CONV assumed).
  const Tile conv = parse_tile("T_R=3\nT_S=3\nT_C=1\nT_G=1\nT_K=2\nT_N=1\nT_X'=1\nT_Y'=1\n",
                               "tile_configuration.txt", OpKind::Conv);
  EXPECT_EQ(conv, (Tile{3, 3, 1, 2, 1, 1, 1, 1}));
  // FC tile: T_S inputs per neuron, T_K output neurons, T_N batch rows -> T_X'.
  const Tile fc = parse_tile("tile_type=\"FC\"\nT_S=64\nT_K=4\nT_N=2\n", "fc.txt", OpKind::Fc);
  EXPECT_EQ(fc.T_S, 64);
  EXPECT_EQ(fc.T_K, 4);
  EXPECT_EQ(fc.T_X, 2);
  for (OpKind k : {OpKind::Conv, OpKind::Fc}) {
    const Tile t = k == OpKind::Conv ? conv : fc;
    EXPECT_EQ(parse_tile(format_tile(t, k), "round trip", k), t);
  }
  EXPECT_THROW(parse_tile("tile_type=\"CONV\"\nT_R=1\n", "bad.txt", OpKind::Conv), Error);
  EXPECT_THROW(parse_tile("tile_type=\"POOL\"\n", "bad.txt", OpKind::Conv), Error);
  EXPECT_THROW(parse_tile("tile_type=\"FC\"\nT_S=0\nT_K=1\nT_N=1\n", "bad.txt", OpKind::Fc), Error);
}

// Issue 23, item 4: a tile with an unknown key, or of another operation, was used silently.
TEST(Tile, UnknownKeysAndTilesOfAnotherOperationAreRefused) {
  auto error_of = [](const std::string& text, OpKind kind) {
    try {
      parse_tile(text, "t.txt", kind);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error_of("tile_type=\"FC\"\nT_S=8\nT_K=1\nT_N=1\nT_Q=2\n", OpKind::Fc)
                .rfind("t.txt:5: unknown key 'T_Q' in an FC tile; did you mean 'T_", 0),
            0u);
  EXPECT_NE(error_of("tile_type=\"FC\"\nT_S=8\nT_K=1\nT_N=1\n", OpKind::Conv)
                .find("this FC tile does not fit a CONV layer"),
            std::string::npos);
  EXPECT_NE(error_of("T_R=3\nT_S=3\nT_C=1\nT_G=1\nT_K=2\nT_N=1\nT_X'=1\nT_Y'=1\nT_R=5\n",
                     OpKind::Conv)
                .find("set twice"),
            std::string::npos);
}

TEST(Counters, RoundTripAndGlobalBufferLine) {
  CountersFile c;
  c.cycles = 6200;
  c.sections = {{"DSNetwork", {{"DN_WIRE", {{"WRITE", 3}, {"READ", 0}}}}},
                {"GlobalBuffer", {{"GLOBALBUFFER", {{"READ", 108720}, {"WRITE", 1600}}}}}};
  const std::string text = format_counters(c);
  EXPECT_EQ(text.substr(0, 12), "CYCLES=6200\n");
  EXPECT_NE(text.find("GLOBALBUFFER READ=108720 WRITE=1600\n"), std::string::npos);
  const CountersFile back = parse_counters(text, "round trip");
  EXPECT_EQ(format_counters(back), text);
  EXPECT_EQ(global_buffer_counts(back), std::make_pair(std::uint64_t{108720}, std::uint64_t{1600}));
  EXPECT_THROW(parse_counters("CYCLES=1\nADDER ADD_2_1=1\n", "no section"), Error);
  EXPECT_THROW(parse_counters("CYCLES=1\n[X]\nADDER ADD_2_1\n", "bad op"), Error);
  // Read as 1.8e19 cycles, and as 0 cycles, before.
  EXPECT_THROW(parse_counters("CYCLES=-1\n[X]\nADDER ADD_2_1=1\n", "negative"), Error);
  EXPECT_THROW(parse_counters("", "empty"), Error);
  EXPECT_THROW(parse_counters("[X]\nADDER ADD_2_1=1\n", "no cycles"), Error);
  // Energies and areas: finite, not negative.
  EXPECT_THROW(parse_energy_table("ADDER ADD_2_1=-0.5\n", "negative"), Error);
  EXPECT_THROW(parse_energy_table("ADDER ADD_2_1=inf\n", "infinite"), Error);
  EXPECT_EQ(parse_energy_table("ADDER ADD_2_1=0.5 AREA=0\n", "ok").entries.at("ADDER").at("AREA"),
            0.0);
}

TEST(Energy, FollowsStonnesTable) {
  // Hand-computed with the seed's table: static per line = STATIC x CYCLES, area per line.
  const CountersFile c = parse_counters(
      "CYCLES=100\n[MSNetwork]\nMULTIPLIER MULTIPLICATION=20 FORWARD_PSUM=0 CONFIGURATION=1\n"
      "MULTIPLIER MULTIPLICATION=0 FORWARD_PSUM=0 CONFIGURATION=0\n[GlobalBuffer]\n"
      "GLOBALBUFFER READ=10 WRITE=5\n",
      "hand");
  const EnergyBreakdown e = compute_energy(default_energy_table(), c);
  EXPECT_NEAR(e.static_energy, 100 * (2 * 0.001614 + 0.0101), 1e-9);
  EXPECT_NEAR(e.dynamic_energy, 20 * 0.00741 + 15 * 0.044, 1e-9);
  EXPECT_NEAR(e.area, 2 * 1001.0 + 115029, 1e-9);
  ASSERT_EQ(e.sections.size(), 2u);
  EXPECT_EQ(e.sections[1].section, "GlobalBuffer");
  // The shipped table equals the built-in one.
  const EnergyTable shipped = load_energy_table(kConfigs / "energy_model.txt");
  EXPECT_EQ(shipped.entries, default_energy_table().entries);
  EXPECT_THROW(compute_energy(default_energy_table(),
                              parse_counters("CYCLES=1\n[X]\nLASER FIRE=1\n", "unknown")),
               Error);
}

TEST(StonneArgs, MapsGemmOntoTheConvTaxonomy) {
  const StonneCommand c = parse_stonne_args(
      {"-DenseGEMM", "-M=20", "-N=30", "-K=256", "-num_ms=256", "-dn_bw=64", "-rn_bw=32", "-T_K=64",
       "-T_M=2", "-T_N=1", "-accumulation_buffer=1", "-rn_type=FENETWORK"});
  EXPECT_EQ(c.op.kind, OpKind::DenseGemm);
  // STONNE's loadDenseGEMM: R=1, S=K, C=1, K=N, G=1, N=1, X=M, Y=K.
  EXPECT_EQ(c.op.R, 1);
  EXPECT_EQ(c.op.S, 256);
  EXPECT_EQ(c.op.K, 30);
  EXPECT_EQ(c.op.X, 20);
  EXPECT_EQ(c.op.Y, 256);
  EXPECT_EQ(c.op.out_x(), 20);
  EXPECT_EQ(c.op.out_y(), 1);
  // loadGEMMTile(T_N, T_K, T_M) -> loadTile(1, T_K, 1, T_N, 1, 1, T_M, 1).
  EXPECT_EQ(c.tile, (Tile{1, 64, 1, 1, 1, 1, 2, 1}));
  EXPECT_EQ(c.hw.ms_size, 256);
  EXPECT_EQ(c.hw.dn_bw, 64);
  EXPECT_EQ(c.hw.rn_bw, 32);
  EXPECT_TRUE(c.hw.accumulation_buffer);
  EXPECT_EQ(c.hw.rn, ReduceNetwork::Fen);
  EXPECT_TRUE(c.tile_given);
}

TEST(StonneArgs, KeepsStonnesDefaultsAndOverridesAConfig) {
  const StonneCommand c = parse_stonne_args({"-CONV", "-dn_bw=8"});
  EXPECT_EQ(c.op.S, 3);  // STONNE's CONV defaults: R=1 S=3 C=1 K=1 X=1 Y=3, tile T_S=3
  EXPECT_EQ(c.op.Y, 3);
  EXPECT_EQ(c.tile.T_S, 3);
  EXPECT_FALSE(c.tile_given);
  EXPECT_EQ(c.hw.ms_size, 64);  // STONNE's Config defaults
  HardwareConfig base;
  base.ms_size = 256;
  base.dn_bw = 64;
  base.accumulation_buffer = true;
  const HardwareConfig merged = merge_hardware(base, c);
  EXPECT_EQ(merged.ms_size, 256);
  EXPECT_EQ(merged.dn_bw, 8);
  EXPECT_TRUE(merged.accumulation_buffer);
}

TEST(StonneArgs, RejectsBadInputWithActionableErrors) {
  auto message = [](std::vector<std::string> args) {
    try {
      parse_stonne_args(args);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message({"-DenseGEMM", "-num_ms=100"}).find("power of two"), std::string::npos);
  EXPECT_NE(message({"-DenseGEMM", "-T_Q=1"}).find("does not exist"), std::string::npos);
  EXPECT_NE(message({"-DenseGEMM", "-dn_bww=4"}).find("-dn_bw"), std::string::npos);
  EXPECT_NE(message({"-CONV", "-R"}).find("-name=value"), std::string::npos);
  EXPECT_NE(message({"-SparseGEMM", "-MK_sparsity=120"}).find("between 0 and 100"),
            std::string::npos);
  EXPECT_NE(message({"-SparseDense", "-dataflow=MK_STA_KN_STR"}).find("does not exist"),
            std::string::npos);
  EXPECT_NE(message({"-GEMM"}).find("-CONV, -FC, -DenseGEMM, -SparseGEMM or -SparseDense"),
            std::string::npos);
  EXPECT_NE(message({"-FC", "-M=0"}).find("positive"), std::string::npos);
}

// Issue 23, item 4: a tile window larger than the filter (T_R=5 on R=3) was accepted.
TEST(TileValidation, AWindowLargerThanTheFilterIsRefused) {
  const StonneCommand c = parse_stonne_args({"-CONV", "-R=3", "-S=3", "-C=4", "-K=4", "-X=8",
                                             "-Y=8", "-num_ms=64", "-dn_bw=16", "-rn_bw=16",
                                             "-T_R=5", "-T_S=3", "-T_C=1", "-T_K=1"});
  try {
    validate_tile(c.hw, c.op, c.tile);
    FAIL() << "a 5x3 window on a 3x3 filter was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("larger than the 3x3 filter"), std::string::npos)
        << e.what();
  }
}

TEST(TileValidation, NamesTheConstraintAndSuggestsALegalTile) {
  const StonneCommand c =
      parse_stonne_args({"-DenseGEMM", "-M=20", "-N=20", "-K=256", "-num_ms=64", "-dn_bw=16",
                         "-rn_bw=16", "-T_K=64", "-T_M=2", "-T_N=1"});
  try {
    validate_tile(c.hw, c.op, c.tile);
    FAIL() << "a 2x65-multiplier tile cannot fit 64 multipliers";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ms_size=64"), std::string::npos) << m;
    EXPECT_NE(m.find("a legal tile is"), std::string::npos) << m;
  }
  // The suggestion is legal.
  const Tile s = suggest_legal_tile(c.hw, c.op);
  EXPECT_EQ(tile_violation(c.hw, c.op, s), "");
  // Folding without an accumulation buffer needs one extra multiplier per neuron.
  EXPECT_NE(tile_violation(c.hw, c.op, make_gemm_tile(1, 1, 64)).find("extra"), std::string::npos);
  EXPECT_EQ(tile_violation(c.hw, c.op, make_gemm_tile(1, 1, 32)), "");
}

}  // namespace
}  // namespace telar::sim
