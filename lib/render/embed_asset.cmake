# cmake -DASSET=FILE -DNAME=NAME -DOUT=FILE.cpp -P embed_asset.cmake: writes FILE.cpp defining
# `const char* const attn_viz::NAME` (declared in html_report_assets.hpp) as FILE's bytes, every
# byte a \xNN escape so no text in FILE can end or alter the literal. Run at build time by
# lib/render/CMakeLists.txt (attnviz_embed_asset) whenever FILE or this script changes.
foreach(variable ASSET NAME OUT)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "embed_asset.cmake: -D${variable}=... is required")
  endif()
endforeach()
file(READ "${ASSET}" hex HEX)
string(LENGTH "${hex}" hex_length)
# Step 1: the bytes as string-literal pieces of 16 bytes (32 hex digits) a line.
set(lines "")
set(at 0)
while(at LESS hex_length)
  string(SUBSTRING "${hex}" ${at} 32 piece)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" piece "${piece}")
  string(APPEND lines "    \"${piece}\"\n")
  math(EXPR at "${at} + 32")
endwhile()
if(hex_length EQUAL 0)
  set(lines "    \"\"\n")
endif()
# Step 2: the definition, included header first so its declaration and this one must agree.
get_filename_component(asset_name "${ASSET}" NAME)
file(WRITE "${OUT}"
  "// Generated from lib/render/assets/${asset_name} by lib/render/embed_asset.cmake: edit the asset, not this file.\n"
  "#include \"html_report_assets.hpp\"\n\n"
  "namespace attn_viz {\n\n"
  "const char* const ${NAME} =\n${lines};\n\n"
  "}  // namespace attn_viz\n")
