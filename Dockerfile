# CPU image of implicit-bench: the default offline pipeline (`dvc repro`), the tests and the tools.
#   docker build -t implicit-bench .
#   docker run --rm -v "$PWD:/repo" -w /repo implicit-bench dvc repro
# The GPU image is Dockerfile.cuda (docs/environment.md).
FROM python:3.11-slim

ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1 IB_REQUIRE_CHROMIUM=1

# git: DVC; chromium: the report / plots browser tests
RUN apt-get update \
 && apt-get install -y --no-install-recommends git chromium \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/implicit-bench
COPY requirements.lock pyproject.toml README.md ./
# torch / torchvision: the same versions as the lock, CPU wheels (no CUDA libraries);
# then every other pinned package, exactly, without resolution (see requirements.lock's header)
RUN pip install --index-url "$TORCH_INDEX" \
        "$(grep '^torch==' requirements.lock)" "$(grep '^torchvision==' requirements.lock)" \
 && grep -vE '^(#|torch==|torchvision==|triton==|nvidia-|cuda-)' requirements.lock > /tmp/rest.txt \
 && pip install --no-deps -r /tmp/rest.txt
COPY src ./src
RUN pip install --no-deps -e .

WORKDIR /repo
CMD ["implicit-bench", "--help"]
