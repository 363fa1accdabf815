#!/bin/sh
# Instructions executed by the attention of tiny transformers' layers (all
# heads of one layer) on QEMU's Cortex-M4F (mps2-an386, DSP port) and
# Cortex-M55 (mps3-an547, Helium port), counted by the TCG plugin
# (bench/qemu/insncount.c): one prefill forward over the whole sequence
# (causal for decoders), fp32 and int8, and one decode step of a static
# KvCache filled to the context (fp32, KvInt8<> and int8_t storage; the
# attend alone). Each figure is one warm call: insns(2 calls) - insns(1
# call). Multiply-adds count the visible (query, key) pairs (N(N+1)/2 per
# head for a causal prefill) times Dk + Dv, times the query heads.
# Both boards have 4 MiB of RAM for data, bss and the 64 KiB stack: the
# prefill image's tensors share a 3.75 MiB arena, and the fp32 cache of
# stories42M at 1024 tokens (4 MiB) is not built.
# Prints markdown tables and writes them to $OUT/insns_models.md.
#   bench/board/count_models.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/board/build.sh"

board_plugin
board_build cortex-m4-bench models_prefill_insns "$OUT/models_prefill_m4.elf"
board_build cortex-m55-bench models_prefill_insns "$OUT/models_prefill_m55.elf"
# Decoders: image name, model, query heads, KV heads, head width, context.
DECODERS="stories260k:stories260K:8:4:8:512 stories15m:stories15M:6:6:48:256 stories42m_256:stories42M:8:8:64:256
stories42m_1024:stories42M:8:8:64:1024 smollm2:SmolLM2-135M:9:3:64:2048"
for model in $DECODERS; do
  name=${model%%:*}
  for storage in f32 kvi8 i8; do
    [ "$name:$storage" = stories42m_1024:f32 ] && continue
    board_build cortex-m4-bench "models_decode_${name}_$storage" "$OUT/models_decode_${name}_${storage}_m4.elf"
    board_build cortex-m55-bench "models_decode_${name}_$storage" "$OUT/models_decode_${name}_${storage}_m55.elf"
  done
done

ARENA=3932160  # models_insns.cc's kArenaBytes

machine_of() { case $1 in m4) echo mps2-an386 ;; m55) echo mps3-an547 ;; esac; }
port_of() { case $1 in m4) echo dsp ;; m55) echo mve ;; esac; }

prefill_cost() {  # prefill_cost BOARD KIND HQ HKV N D CAUSAL -> instructions of one forward
  b=$1 kind=$2
  shift 2
  elf="$OUT/models_prefill_$b.elf"
  with=$(board_count models "$elf" "$(machine_of "$b")" "$kind" "$(port_of "$b")" 2 "$@")
  without=$(board_count models "$elf" "$(machine_of "$b")" "$kind" "$(port_of "$b")" 1 "$@")
  echo $((with - without))
}
decode_cost() {  # decode_cost BOARD IMAGE STORAGE FILLED -> instructions of one attend
  elf="$OUT/models_decode_$2_$3_$1.elf"
  with=$(board_count models "$elf" "$(machine_of "$1")" "$(port_of "$1")" 2 "$4")
  without=$(board_count models "$elf" "$(machine_of "$1")" "$(port_of "$1")" 1 "$4")
  echo $((with - without))
}

# macs HQ N M D CAUSAL -> multiply-adds of the visible pairs (Dk = Dv = D)
macs() {
  if [ "$5" = 1 ]; then echo $(($1 * $2 * ($2 + 1) / 2 * 2 * $4)); else echo $(($1 * $2 * $3 * 2 * $4)); fi
}
# per A B -> A / B to two decimals
per() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# tensor_bytes KIND HQ HKV N D -> bytes of Q, K, V and Y
tensor_bytes() {
  bytes=$(((2 * $2 + 2 * $3) * $4 * $5))
  if [ "$1" = f32 ]; then echo $((bytes * 4)); else echo "$bytes"; fi
}
# prefill_cell BOARD KIND HQ HKV N D CAUSAL -> "insns (per multiply-add)" or why not
prefill_cell() {
  bytes=$(tensor_bytes "$2" "$3" "$4" "$5" "$6")
  if [ "$bytes" -le "$ARENA" ]; then
    c=$(prefill_cost "$@")
    echo "$c ($(per "$c" "$(macs "$3" "$5" "$5" "$6" "$7")"))"
  else
    echo "does not fit the board's 4 MiB of RAM ($(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }') MiB of tensors)"
  fi
}

table="$OUT/insns_models.md"
{
  echo "| prefill | Hq/Hkv | D | N | causal | multiply-adds | M4F dsp fp32 | M4F dsp int8 | M55 mve fp32 | M55 mve int8 |"
  echo "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"
  for row in stories260K:8:4:512:8:1 stories15M:6:6:256:48:1 stories42M:8:8:256:64:1 stories42M:8:8:1024:64:1 \
    SmolLM2-135M:9:3:2048:64:1 KWT-1:1:1:99:64:0 MobileViT-XXS:4:4:64:20:0 MobileViT-XXS:4:4:256:16:0 \
    MobileViT-XXS:4:4:16:24:0 TinyBERT-4:12:12:128:26:0; do
    # shellcheck disable=SC2046 # the fields of one row
    set -- $(echo "$row" | tr ':' ' ')
    name=$1
    shift
    cells=""
    for run in "m4 f32" "m4 i8" "m55 f32" "m55 i8"; do
      # shellcheck disable=SC2086
      cells="$cells | $(prefill_cell $run "$@")"
    done
    echo "| $name | $1/$2 | $4 | $3 | $([ "$5" = 1 ] && echo yes || echo no) | $(macs "$1" "$3" "$3" "$4" "$5")$cells |"
  done
  echo
  echo "| decode | Hq/Hkv | D | context | multiply-adds | M4F dsp fp32 | M4F dsp KvInt8 | M4F dsp int8 | M55 mve fp32 | M55 mve KvInt8 | M55 mve int8 |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for model in $DECODERS; do
    # shellcheck disable=SC2046
    set -- $(echo "$model" | tr ':' ' ')
    mac=$(($3 * $6 * 2 * $5))
    cells=""
    for b in m4 m55; do
      for storage in f32 kvi8 i8; do
        if [ "$1:$storage" = stories42m_1024:f32 ]; then
          cells="$cells | does not fit the board's 4 MiB of RAM (4 MiB cache)"
        else
          c=$(decode_cost $b "$1" $storage "$6")
          cells="$cells | $c ($(per "$c" "$mac"))"
        fi
      done
    done
    echo "| $2 | $3/$4 | $5 | $6 | $mac$cells |"
  done
  # Odd head widths against a power of two at the same heads, N and M:
  # instructions per multiply-add, the odd width's over the power of two's.
  echo
  echo "| odd head width (Hq/Hkv, N, causal) | Dk vs Dk | M4F dsp fp32 | M4F dsp int8 | M55 mve fp32 | M55 mve int8 |"
  echo "|---|---|---:|---:|---:|---:|"
  for row in stories15M:6:6:256:1:48:64 MobileViT-XXS:4:4:64:0:20:32 MobileViT-XXS:4:4:16:0:24:32 \
    TinyBERT-4:12:12:128:0:26:32; do
    # shellcheck disable=SC2046
    set -- $(echo "$row" | tr ':' ' ')
    cells=""
    for run in "m4 f32" "m4 i8" "m55 f32" "m55 i8"; do
      # shellcheck disable=SC2086
      set -- $run "$@"
      odd=$(per "$(prefill_cost "$1" "$2" "$4" "$5" "$6" "$8" "$7")" "$(macs "$4" "$6" "$6" "$8" "$7")")
      pow=$(per "$(prefill_cost "$1" "$2" "$4" "$5" "$6" "$9" "$7")" "$(macs "$4" "$6" "$6" "$9" "$7")")
      cells="$cells | $odd / $pow = $(per "$odd" "$pow")x"
      shift 2
    done
    echo "| $1 ($2/$3, $4, $([ "$5" = 1 ] && echo causal || echo not causal)) | $6 vs $7$cells |"
  done
  # Odd key counts: instructions per multiply-add at 99 and 100 tokens
  # (KWT-1's prefill) and per decode step at 255 and 256 cached tokens
  # (stories42M's 256-token cache).
  echo
  echo "| odd key count | M4F dsp fp32 | M4F dsp int8 | M55 mve fp32 | M55 mve int8 |"
  echo "|---|---:|---:|---:|---:|"
  cells=""
  for run in "m4 f32" "m4 i8" "m55 f32" "m55 i8"; do
    # shellcheck disable=SC2086
    a=$(per "$(prefill_cost $run 1 1 99 64 0)" "$(macs 1 99 99 64 0)")
    # shellcheck disable=SC2086
    b=$(per "$(prefill_cost $run 1 1 100 64 0)" "$(macs 1 100 100 64 0)")
    cells="$cells | $a / $b = $(per "$a" "$b")x"
  done
  echo "| KWT-1 prefill (1 head, D 64), 99 vs 100 tokens, per multiply-add$cells |"
  echo
  echo "| odd key count | M4F dsp fp32 | M4F dsp KvInt8 | M4F dsp int8 | M55 mve fp32 | M55 mve KvInt8 | M55 mve int8 |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  cells=""
  for b in m4 m55; do
    for storage in f32 kvi8 i8; do
      a=$(per "$(decode_cost $b stories42m_256 $storage 255)" $((8 * 255 * 128)))
      c=$(per "$(decode_cost $b stories42m_256 $storage 256)" $((8 * 256 * 128)))
      cells="$cells | $a / $c = $(per "$a" "$c")x"
    done
  done
  echo "| stories42M decode (8 heads, D 64), 255 vs 256 cached tokens, per multiply-add$cells |"
} >"$table"
cat "$table"
