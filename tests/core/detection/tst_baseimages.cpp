// The images a Dockerfile's build pulls, read from Dockerfiles as people write them (the forms the
// Dockerfile reference describes, in our own words): stages named and numbered, global ARGs and
// build args in FROM, COPY --from and RUN --mount from an image, the escape directive,
// continuation and comment lines, heredocs whose lines look like instructions.
#include "core/detection/baseimages.h"

#include <QTest>

using namespace Qt::StringLiterals;
using pando::core::baseImages;
using BuildArgs = QMap<QString, QString>;

class TestBaseImages : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void images_data()
    {
        QTest::addColumn<QByteArray>("dockerfile");
        QTest::addColumn<BuildArgs>("args");
        QTest::addColumn<QStringList>("expected");
        const BuildArgs none;

        QTest::newRow("one FROM") << QByteArray("FROM node:20-alpine\nWORKDIR /app\nCOPY . .\nCMD [\"node\", \"x\"]\n")
                                  << none << QStringList{u"node:20-alpine"_s};
        QTest::newRow("stages by name and number, and an image to copy from")
            << QByteArray("FROM golang:1.22 AS build\n"
                          "RUN go build -o /out/app .\n"
                          "FROM build AS test\n"
                          "RUN go test ./...\n"
                          "FROM gcr.io/distroless/static:nonroot\n"
                          "COPY --from=build /out/app /app\n"
                          "COPY --from=0 /etc/ssl /etc/ssl\n"
                          "COPY --from=nginx:1.27 /etc/nginx/nginx.conf /etc/nginx/\n")
            << none << QStringList{u"golang:1.22"_s, u"gcr.io/distroless/static:nonroot"_s, u"nginx:1.27"_s};
        QTest::newRow("stage names are not case sensitive")
            << QByteArray("from alpine:3.20 as Builder\nrun make\nfrom BUILDER\ncopy --from=builder /a /b\n") << none
            << QStringList{u"alpine:3.20"_s};
        QTest::newRow("scratch is no image")
            << QByteArray("FROM rust:1 AS b\nFROM scratch\nCOPY --from=b /x /x\n") << none << QStringList{u"rust:1"_s};
        QTest::newRow("a global ARG's default") << QByteArray("ARG NODE_VERSION=20\nFROM node:${NODE_VERSION}-alpine\n")
                                                << none << QStringList{u"node:20-alpine"_s};
        QTest::newRow("a build arg over the default")
            << QByteArray("ARG NODE_VERSION=20\nFROM node:${NODE_VERSION}-alpine\n")
            << BuildArgs{{u"NODE_VERSION"_s, u"22"_s}} << QStringList{u"node:22-alpine"_s};
        QTest::newRow("several declarations, quoted, $NAME and defaults")
            << QByteArray("ARG REGISTRY=\"ghcr.io/acme\" TAG='1.4'\nARG MIRROR\n"
                          "FROM $REGISTRY/base:$TAG\n"
                          "FROM ${MIRROR:-docker.io}/library/python:3.12-slim\n"
                          "FROM ${MIRROR:+mirror.example}redis:7\n")
            << none << QStringList{u"ghcr.io/acme/base:1.4"_s, u"docker.io/library/python:3.12-slim"_s, u"redis:7"_s};
        QTest::newRow("an ARG with no default takes the build arg")
            << QByteArray("ARG BASE\nFROM ${BASE}\n")
            << BuildArgs{{u"BASE"_s, u"registry.gitlab.com/acme/images/ruby:3.3"_s}}
            << QStringList{u"registry.gitlab.com/acme/images/ruby:3.3"_s};
        QTest::newRow("a build arg nobody declared is not used")
            << QByteArray("FROM ${BASE:-alpine:3.20}\n") << BuildArgs{{u"BASE"_s, u"evil:1"_s}}
            << QStringList{u"alpine:3.20"_s};
        QTest::newRow("an unset variable is empty; what is left is no image")
            << QByteArray("ARG IMAGE\nFROM $IMAGE\nFROM ${IMAGE}:1\n") << none << QStringList{};
        QTest::newRow("an ARG after the first FROM does not reach the next FROM")
            << QByteArray("FROM alpine:3.20\nARG LATER=ghcr.io/acme/later:1\nFROM ${LATER:-busybox:1}\n") << none
            << QStringList{u"alpine:3.20"_s, u"busybox:1"_s};
        QTest::newRow("a stage's ARG for COPY --from, the global one only when declared again")
            << QByteArray("ARG ASSETS=ghcr.io/acme/assets:2\nARG OTHER=ghcr.io/acme/other:1\n"
                          "FROM nginx:1.27\n"
                          "ARG ASSETS\n"
                          "COPY --from=${ASSETS} /dist /usr/share/nginx/html\n"
                          "COPY --from=${OTHER:-busybox:1} /bin/sh /bin/sh\n")
            << none << QStringList{u"nginx:1.27"_s, u"ghcr.io/acme/assets:2"_s, u"busybox:1"_s};
        QTest::newRow("flags before the image, continuation and comment lines")
            << QByteArray("# syntax=docker/dockerfile:1\n"
                          "FROM \\\n"
                          "  --platform=$BUILDPLATFORM \\\n"
                          "# the toolchain\n"
                          "  golang:1.22-bookworm \\\n"
                          "  AS build\n"
                          "RUN --mount=type=cache,target=/go/pkg/mod \\\n"
                          "    --mount=type=bind,from=ghcr.io/acme/protos:3,source=/p,target=/p \\\n"
                          "    --mount=type=bind,from=build,target=/src go build ./...\n")
            << none << QStringList{u"golang:1.22-bookworm"_s, u"ghcr.io/acme/protos:3"_s};
        QTest::newRow("the escape directive")
            << QByteArray("# escape=`\n\nFROM mcr.microsoft.com/windows/servercore:ltsc2022 `\n  AS base\n"
                          "COPY testfile.txt c:\\\nRUN dir c:\\\n")
            << none << QStringList{u"mcr.microsoft.com/windows/servercore:ltsc2022"_s};
        QTest::newRow("an escaped dollar is no variable")
            << QByteArray("ARG X=alpine\nFROM \\$X\nFROM $X:3\n") << none << QStringList{u"alpine:3"_s};
        QTest::newRow("heredoc lines are not instructions")
            << QByteArray("FROM debian:12\n"
                          "RUN <<EOF\nFROM not-an-image:1\nEOF\n"
                          "COPY <<-\"CONF\" /etc/app.conf\n\tFROM still-not:2\n\tCONF\n"
                          "FROM python:3.12\n")
            << none << QStringList{u"debian:12"_s, u"python:3.12"_s};
        QTest::newRow("Windows line ends, each image once, a digest")
            << QByteArray("FROM alpine@sha256:" + QByteArray(64, 'a') +
                          " AS a\r\nFROM alpine@sha256:" + QByteArray(64, 'a') + "\r\nFROM node:20\r\nFROM node:20\r\n")
            << none << QStringList{u"alpine@sha256:"_s + QString(64, u'a'), u"node:20"_s};
        QTest::newRow("no Dockerfile at all") << QByteArray() << none << QStringList{};
    }

    void images()
    {
        QFETCH(QByteArray, dockerfile);
        QFETCH(BuildArgs, args);
        QFETCH(QStringList, expected);
        QCOMPARE(baseImages(dockerfile, args), expected);
    }
};

QTEST_GUILESS_MAIN(TestBaseImages)
#include "tst_baseimages.moc"
