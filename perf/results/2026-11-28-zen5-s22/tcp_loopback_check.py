import socket, threading, time, os, sys
N = 8 << 20; R = 100
def server(port, ready):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', port)); s.listen(1); ready.set()
    c, _ = s.accept(); buf = bytearray(N); mv = memoryview(buf); got = 0
    while got < N * R:
        n = c.recv_into(mv[: min(N, N*R-got)]); got += n
def client(port):
    c = socket.create_connection(('127.0.0.1', port)); b = bytes(N)
    for _ in range(R): c.sendall(b)
bidir = len(sys.argv) > 1
pids = []
for k, port in enumerate([15001, 15002][: 2 if bidir else 1]):
    pid = os.fork()
    if pid == 0:
        ready = threading.Event(); t = threading.Thread(target=server, args=(port, ready)); t.start(); ready.wait()
        os._exit(0) if False else None
        t.join(); os._exit(0)
    pids.append(pid)
time.sleep(0.3)
t0 = time.time()
cl = []
for k, port in enumerate([15001, 15002][: 2 if bidir else 1]):
    pid = os.fork()
    if pid == 0: client(port); os._exit(0)
    cl.append(pid)
for p in pids + cl: os.waitpid(p, 0)
dt = time.time() - t0
print("GB/s per direction", N * R / dt / 1e9)
