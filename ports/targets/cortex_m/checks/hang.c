// A firmware that never exits must be stopped by the runner's timeout (124).
int main(void) {
  for (;;) {
    __asm__ volatile("" ::: "memory");
  }
}
