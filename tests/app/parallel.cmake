# Spreading the work (docs/scaling.md): --jobs, --shard and merge, calibrate --jobs and progress
# (tests/app/parallel_test.cpp, which runs the real binary), and mpirun with two ranks against
# one process (tests/app/mpi_equality.sh). Included by tests/CMakeLists.txt.
dmasim_add_test(test_parallel SOURCES app/parallel_test.cpp LIBS dmasim_app)
target_compile_definitions(test_parallel PRIVATE DMASIM_BINARY="$<TARGET_FILE:dmasim>")
add_dependencies(test_parallel dmasim)

# Registered in every build: without MPI it reports itself skipped (exit 77) with the reason,
# rather than passing or vanishing.
set(_dmasim_mpiexec "")
if(DMASIM_MPI)
  set(_dmasim_mpiexec "${MPIEXEC_EXECUTABLE}")
endif()
add_test(NAME mpi.two_ranks_write_the_files_of_one_process
         COMMAND /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/app/mpi_equality.sh $<TARGET_FILE:dmasim> "${_dmasim_mpiexec}"
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(mpi.two_ranks_write_the_files_of_one_process PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
