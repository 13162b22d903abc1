/** Whether a process with this id is still running (signal 0 only checks that it exists). */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
