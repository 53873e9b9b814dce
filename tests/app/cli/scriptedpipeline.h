#pragma once
// The pipeline the CLI tests set on the test install's scripted pipeline service
// (tests/app/server/pipelinefakes.h, which plays a run by its job's name): unit succeeds,
// unitfail fails, builderror errors and slowjob takes a while.

#include <QByteArray>

namespace pando::test {

inline const QByteArray ScriptedPipelineYaml = "resources:\n"
                                               "- name: repo\n"
                                               "  type: git\n"
                                               "jobs:\n"
                                               "- name: unit\n"
                                               "- name: unitfail\n"
                                               "- name: builderror\n"
                                               "- name: slowjob\n";

} // namespace pando::test
