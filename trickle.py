import json, socket, threading, time
s = socket.create_server(("127.0.0.1", 0)); print(s.getsockname()[1], flush=True)
def serve(c):
    req = c.recv(65536)
    if b"GET /v1/models" in req:
        body = json.dumps({"data": [{"id": "m"}]}).encode()
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body); c.close(); return
    body = json.dumps({"choices": [{"message": {"content": "x" * 500}, "finish_reason": "stop"}]}).encode()
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    try:
        for b in body:
            time.sleep(0.2); c.sendall(bytes([b]))
    except OSError: pass
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
