// Catch2 main for every kforge test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
