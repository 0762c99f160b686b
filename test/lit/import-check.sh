#!/bin/sh
# import-check.sh CASE.onnxtxt [kiln import options...]
# Assembles the ONNX text model in CASE, imports it with `kiln import` and
# checks the IR against the CHECK lines of CASE. Used by the frontend lit
# tests so that each case is one RUN line.
set -e
case_file=$1
shift
/usr/bin/python3 "$(dirname "$0")/onnx-assemble.py" "$case_file" "$case_file.onnx"
kiln import "$case_file.onnx" "$@" | FileCheck "$case_file"
