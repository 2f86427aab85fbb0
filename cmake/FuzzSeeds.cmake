# Builds the seed corpora of the fuzz targets (tests/fuzz, docs/testing.md) from the files the
# repository ships, so that no seed is kept twice in git. Run at build time:
#   cmake -DSRC_DIR=<source dir> -DOUT=<dir> -P FuzzSeeds.cmake
# OUT/<target>/ gets one file per seed, OUT/<target>.dict a libFuzzer dictionary (the keys and
# units those files use). Regenerated from scratch each time.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${OUT}")

# Copies the files matched by the globs (relative to SRC_DIR) into OUT/<target>/, named after
# their path.
function(copy_seeds target)
  file(MAKE_DIRECTORY "${OUT}/${target}")
  foreach(pattern ${ARGN})
    file(GLOB_RECURSE files RELATIVE "${SRC_DIR}" "${SRC_DIR}/${pattern}")
    list(SORT files)
    foreach(f ${files})
      string(REPLACE "/" "_" name "${f}")
      file(COPY_FILE "${SRC_DIR}/${f}" "${OUT}/${target}/${name}")
    endforeach()
  endforeach()
endfunction()

# One seed file per distinct text, named after its hash.
function(write_seeds target)
  file(MAKE_DIRECTORY "${OUT}/${target}")
  foreach(text IN LISTS ARGN)
    string(MD5 h "${text}")
    file(WRITE "${OUT}/${target}/${h}" "${text}")
  endforeach()
endfunction()

# A dictionary: one quoted token per line (libFuzzer's -dict format; tokens may use its \xNN
# escapes, quotes are escaped here).
function(write_dict target)
  set(body "")
  set(tokens ${ARGN})
  list(REMOVE_DUPLICATES tokens)
  list(SORT tokens)
  foreach(t IN LISTS tokens)
    string(REPLACE "\"" "\\\"" t "${t}")
    string(APPEND body "\"${t}\"\n")
  endforeach()
  file(WRITE "${OUT}/${target}.dict" "${body}")
endfunction()

copy_seeds(scenario "scenarios/*.yaml" "tests/app/fixtures/*.yaml")
copy_seeds(platform "platforms/*.yaml")
copy_seeds(plan "results/plan.txt" "gpu_validation/plans/*.txt")
copy_seeds(results_csv "results/*.csv" "tests/app/fixtures/*.csv")
copy_seeds(import_smi "tests/topology/fixtures/nvidia-smi-topo/*.txt")

# YAML keys and the values of every `key: value` line (scenarios, platforms, calibrations).
file(GLOB_RECURSE yaml_files "${SRC_DIR}/scenarios/*.yaml" "${SRC_DIR}/platforms/*.yaml"
     "${SRC_DIR}/results/*/calibration.yaml")
list(SORT yaml_files)
set(keys "")
set(values "")
set(sets "")
foreach(f ${yaml_files})
  file(STRINGS "${f}" lines)
  set(calibration_sets "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[ -]*([A-Za-z_][A-Za-z0-9_.]*):[ ]*([^#]*)")
      set(key "${CMAKE_MATCH_1}")
      string(STRIP "${CMAKE_MATCH_2}" value)
      list(APPEND keys "${key}:")
      if(value MATCHES "^[[]?([^]]*)[]]?$")
        string(REPLACE "," ";" items "${CMAKE_MATCH_1}")
        foreach(item IN LISTS items)
          string(STRIP "${item}" item)
          if(item MATCHES "^-?[0-9][0-9.]*[ ]?[A-Za-z/]*$")
            list(APPEND values "${item}")
          endif()
        endforeach()
      endif()
      # A calibration's parameters, as --set lines.
      if(f MATCHES "calibration.yaml$" AND key MATCHES "[.]" AND value MATCHES "^[0-9]")
        string(APPEND calibration_sets "${key}=${value}\n")
      endif()
    endif()
  endforeach()
  if(NOT calibration_sets STREQUAL "")
    list(APPEND sets "${calibration_sets}")
  endif()
endforeach()
list(REMOVE_DUPLICATES values)

# Every `--set KEY=VALUE` the README and the docs show.
file(GLOB doc_files "${SRC_DIR}/README.md" "${SRC_DIR}/docs/*.md")
list(SORT doc_files)
foreach(f ${doc_files})
  file(STRINGS "${f}" lines REGEX "--set [^ ]+=")
  foreach(line IN LISTS lines)
    string(REGEX MATCHALL "--set [^ `|]+=[^ `|]*" found "${line}")
    set(one "")
    foreach(s IN LISTS found)
      string(REGEX REPLACE "^--set " "" s "${s}")
      string(APPEND one "${s}\n")
    endforeach()
    if(NOT one STREQUAL "")
      list(APPEND sets "${one}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES sets)

write_seeds(units ${values})
write_seeds(set ${sets})

set(unit_tokens B KB MB GB TB KiB MiB GiB TiB ps ns us ms s B/s KB/s MB/s GB/s TB/s KiB/s MiB/s GiB/s TiB/s GT/s MT/s)
write_dict(units ${unit_tokens} "." "-")
write_dict(scenario ${keys} ${unit_tokens} "---" "- " "\\x5b" "\\x5d" "{" "}" "&a" "*a" "<<:")
write_dict(platform ${keys} ${unit_tokens} "---" "- " "\\x5b" "\\x5d" "{" "}" "&a" "*a" "<<:")
list(TRANSFORM keys REPLACE ":$" "=" OUTPUT_VARIABLE set_keys)
write_dict(set ${set_keys} ${unit_tokens} "," ".")

# Plan keys (key=) from the shipped plans, and the results columns.
set(plan_tokens "dmasim-plan 1" "case " "%20" "%25" "%3D")
foreach(f "${SRC_DIR}/results/plan.txt")
  file(STRINGS "${f}" lines REGEX "^case ")
  foreach(line IN LISTS lines)
    string(REGEX MATCHALL "[a-z_0-9]+=" ks "${line}")
    list(APPEND plan_tokens ${ks})
  endforeach()
endforeach()
write_dict(plan ${plan_tokens})
write_dict(results_csv scenario strategy direction directions size_bytes time_us gbps source repetitions
           p10_us p90_us min_us max_us variant status note cv "\"" "," "\"\"" "\\x0d")
write_dict(import_smi GPU0 GPU1 GPU7 NIC0 NIC1 X SYS NODE PHB PXB PIX NV1 NV4 NV18 "CPU Affinity" "NUMA Affinity"
           "GPU NUMA ID" "Legend:" "NIC Legend:" "\\x09" "\\x1b\\x5b4m" "\\x1b\\x5b0m" "N/A" "mlx5_0")
