/* TCG plugin counting executed guest instructions, for bench/board/count.sh.
 *
 * QEMU 7.2 (Debian 12) supports plugins but ships no qemu-plugin.h, so the
 * few declarations used here are written out from plugin API version 1.
 * Each instruction gets an inline counter add when its block is translated:
 * exact and repeatable (a per-block add would also count the rest of a block
 * that an exception leaves early).
 *
 * Build: gcc -O2 -shared -fPIC -o libinsncount.so insncount.c
 * Use:   qemu-system-arm ... -plugin ./libinsncount.so,outfile=/path/count.txt
 *        (without outfile the count goes to QEMU's log: add -d plugin)
 * profile=/path/profile.txt also writes "address count" for every executed
 * instruction in the 64 MiB window of the first one (the image's code region:
 * at 0 on most boards, 0x10000000 on the M33's secure alias, 0x80000000 on
 * RISC-V virt), for attributing the count to functions with the image's
 * symbol table.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
  const char* target_name;
  struct {
    int min;
    int cur;
  } version;
  bool system_emulation;
  union {
    struct {
      int smp_vcpus;
      int max_vcpus;
    } system;
  };
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t, struct qemu_plugin_tb*);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t, void*);

extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, qemu_plugin_vcpu_tb_trans_cb_t);
extern void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn*, enum qemu_plugin_op, void*,
                                                       uint64_t);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb*);
extern struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb*, size_t);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, qemu_plugin_udata_cb_t, void*);
extern void qemu_plugin_outs(const char*);
extern uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn*);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t insns; /* the boards have one vCPU: a plain counter suffices */
static char outfile[4096];
static char profile_file[4096];
/* One counter per 16-bit instruction slot of a 64 MiB window of addresses,
 * the window of the first instruction translated (the reset code). */
#define PROFILE_WINDOW (64u << 20)
#define PROFILE_SLOTS (PROFILE_WINDOW >> 1)
static uint64_t* profile;
static uint64_t profile_base;
static bool profile_base_set;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &insns, 1);
    const uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
    if (!profile_base_set) {
      profile_base = vaddr & ~(uint64_t)(PROFILE_WINDOW - 1);
      profile_base_set = true;
    }
    const uint64_t slot = (vaddr - profile_base) >> 1; /* wraps to huge below the window */
    if (profile && slot < PROFILE_SLOTS)
      qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &profile[slot], 1);
  }
}

static void at_exit(qemu_plugin_id_t id, void* unused) {
  (void)id;
  (void)unused;
  char line[64];
  snprintf(line, sizeof line, "insns: %llu\n", (unsigned long long)insns);
  FILE* f = outfile[0] ? fopen(outfile, "w") : NULL;
  if (f) {
    fputs(line, f);
    fclose(f);
  } else {
    qemu_plugin_outs(line);
  }
  FILE* p = profile ? fopen(profile_file, "w") : NULL;
  if (p) {
    for (uint64_t slot = 0; slot < PROFILE_SLOTS; ++slot)
      if (profile[slot]) fprintf(p, "%llx %llu\n", (unsigned long long)(profile_base + (slot << 1)), (unsigned long long)profile[slot]);
    fclose(p);
  }
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info,
                                                              int argc, char** argv) {
  (void)info;
  for (int i = 0; i < argc; ++i) {
    if (strncmp(argv[i], "outfile=", 8) == 0) snprintf(outfile, sizeof outfile, "%s", argv[i] + 8);
    if (strncmp(argv[i], "profile=", 8) == 0) {
      snprintf(profile_file, sizeof profile_file, "%s", argv[i] + 8);
      profile = calloc(PROFILE_SLOTS, sizeof *profile);
    }
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
