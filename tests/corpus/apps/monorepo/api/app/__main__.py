import os

import uvicorn
from fastapi import FastAPI

app = FastAPI()


@app.get("/")
def root():
    return {"service": "api"}


uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")))
