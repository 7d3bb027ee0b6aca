# cmake -P script: the device-library directory of the offline HIP compiler
# (runtime/device/hip/hip_offline_compiler.cpp). Links every bitcode file of Debian's
# rocm-device-libs (SOURCE) into OUT and generates oclc_isa_version_942.bc and
# _950.bc, which Debian lacks, from the 940 file: its one constant, the ISA
# version, changed (llvm-dis LLVM_DIS, llvm-as LLVM_AS).
file(MAKE_DIRECTORY "${OUT}")
file(GLOB bitcode "${SOURCE}/*.bc")
foreach(f IN LISTS bitcode)
  get_filename_component(name "${f}" NAME)
  file(CREATE_LINK "${f}" "${OUT}/${name}" SYMBOLIC)
endforeach()
execute_process(COMMAND "${LLVM_DIS}" "${SOURCE}/oclc_isa_version_940.bc" -o "${OUT}/isa_940.ll"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${LLVM_DIS} ${SOURCE}/oclc_isa_version_940.bc failed")
endif()
file(READ "${OUT}/isa_940.ll" ir)
string(FIND "${ir}" "i32 9400" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${SOURCE}/oclc_isa_version_940.bc holds no 'i32 9400'")
endif()
foreach(version 9402 9500)
  string(REPLACE "i32 9400" "i32 ${version}" patched "${ir}")
  string(SUBSTRING "${version}" 0 2 major)
  string(SUBSTRING "${version}" 3 1 step)
  file(WRITE "${OUT}/isa_${version}.ll" "${patched}")
  execute_process(COMMAND "${LLVM_AS}" "${OUT}/isa_${version}.ll" -o "${OUT}/oclc_isa_version_${major}${step}.bc"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${LLVM_AS} ${OUT}/isa_${version}.ll failed")
  endif()
  file(REMOVE "${OUT}/isa_${version}.ll")
endforeach()
file(REMOVE "${OUT}/isa_940.ll")
