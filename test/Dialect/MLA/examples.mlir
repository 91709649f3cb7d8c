// The sample modules in examples/ (Kimi-K3 TP8, qlen 1, 2, 4, and qlen 1 warp-specialised)
// parse, verify and print with the configuration they state.
// RUN: mla-opt %mla_src_root/examples/kimi_k3_tp8_q1.mlir | FileCheck %s --check-prefix=Q1
// RUN: mla-opt %mla_src_root/examples/kimi_k3_tp8_q2.mlir | FileCheck %s --check-prefix=Q2
// RUN: mla-opt %mla_src_root/examples/kimi_k3_tp8_q4.mlir | FileCheck %s --check-prefix=Q4
// RUN: mla-opt %mla_src_root/examples/kimi_k3_tp8_q1_wspec.mlir | FileCheck %s --check-prefix=Q1W

// Q1-LABEL: func.func @kimi_k3_tp8_q1
// Q1: mla.split_kv_decode {{.*}} {config = #mla.config<>}
// Q1: mla.combine {{.*}} {config = #mla.config<>}

// Q2-LABEL: func.func @kimi_k3_tp8_q2
// Q2: mla.split_kv_decode {{.*}} {config = #mla.config<qlen = 2>}
// Q2: mla.combine {{.*}} {config = #mla.config<qlen = 2>}

// Q4-LABEL: func.func @kimi_k3_tp8_q4
// Q4: mla.split_kv_decode {{.*}} {config = #mla.config<qlen = 4>}
// Q4: mla.combine {{.*}} {config = #mla.config<qlen = 4>}

// Q1W-LABEL: func.func @kimi_k3_tp8_q1_wspec
// Q1W: mla.split_kv_decode {{.*}} {config = #mla.config<wspec = true>}
// Q1W: mla.combine {{.*}} {config = #mla.config<wspec = true>}
