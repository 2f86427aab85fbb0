// The strategies, one function each (model/src/strategies/<name>.cpp); table() lists them.
#pragma once

#include "dmasim/strategies/strategy.h"

namespace dmasim::strategies {

void run_pinned(Engine& engine, Case& c);
void run_duplex(Engine& engine, Case& c);
void run_pageable(Engine& engine, Case& c);
void run_registered(Engine& engine, Case& c);
void run_async_overlap(Engine& engine, Case& c);
void run_periodic(Engine& engine, Case& c);
void run_zero_copy(Engine& engine, Case& c);
void run_peer(Engine& engine, Case& c);
void run_third_party_dma(Engine& engine, Case& c);
void run_cpu_mapped(Engine& engine, Case& c);

}  // namespace dmasim::strategies
